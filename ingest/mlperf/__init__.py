"""MLPerf Inference results (evidence ``measured``), one file per round.

    parse.py   a round's summary CSV → typed rows (every column kept, normalised beside it)
    load.py    the sources.toml section; replace a round's rows when its file changed; map
               accelerator spellings to ids once every source has loaded
    suite.py   validation rules for mlperf_result
"""

from ingest.context import SourceSpec
from ingest.mlperf import suite
from ingest.mlperf.load import MlperfConfig, apply_aliases, load

SPEC = SourceSpec(name="mlperf", config=MlperfConfig, load=load, rules=suite.rules,
                  finish=apply_aliases, doc="MLPerf Inference results, one summary per round")
