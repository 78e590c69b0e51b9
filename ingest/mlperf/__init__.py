"""MLPerf Inference results (evidence ``measured``), one file per round.

    parse.py         a round's file → rows; the format recognised from the content
    csv_format.py    summary.csv         json_format.py   summary_results.json
    rows.py          the columns both formats fill, the natural key, derived columns
    load.py          the sources.toml section; each round loaded (or kept stale) on its own
    identity.py      an accelerator spelling → its identity (vendor, product, form factor,
                     memory) and its decorations (power cap, partition mode, cooling, ...)
    accelerators.py  accelerator spellings → ids (curated spelling, else an identity that fits
                     one id alone; ambiguous and unmapped names reported), at every publish
    suite.py         validation rules for mlperf_result
"""

from ingest.context import SourceSpec
from ingest.mlperf import suite
from ingest.mlperf.accelerators import apply_aliases
from ingest.mlperf.load import MlperfConfig, load

SPEC = SourceSpec(name="mlperf", config=MlperfConfig, load=load, rules=suite.rules,
                  finish=apply_aliases, doc="MLPerf Inference results, one summary (CSV or JSON) per round")
