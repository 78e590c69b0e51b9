"""MLPerf Inference rules (evidence ``benchmark_rule``): TTFT/TPOT limits per benchmark.

    parse.py   the AsciiDoc rules document → one row per (model, scenario) limit
    load.py    the sources.toml section (URL, per-round pins); keep every document's limits
    suite.py   validation rules for benchmark_rule
"""

from ingest.context import SourceSpec
from ingest.mlperf_rules import suite
from ingest.mlperf_rules.load import RulesConfig, load

SPEC = SourceSpec(name="mlperf_rules", config=RulesConfig, load=load, rules=suite.rules,
                  doc="MLPerf Inference rules document: latency limits")
