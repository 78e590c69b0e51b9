"""SemiAnalysis InferenceX observations (evidence ``third_party_measured``), append-only.

    parse.py    /api/v1/benchmarks rows → observations (NULL not 0, power with its verdict,
                extras); the availability listing → model keys
    aliases.py  data/inferencex.yaml: hardware keys → accelerator ids, model keys → model ids
                and display names; the identity report run after every refresh
    load.py     the sources.toml section; fetch, parse and append new observations by id
    suite.py    validation rules for inferencex_observation
"""

from ingest.context import SourceSpec
from ingest.inferencex import suite
from ingest.inferencex.aliases import identity
from ingest.inferencex.load import InferencexConfig, load

SPEC = SourceSpec(name="inferencex", config=InferencexConfig, load=load, rules=suite.rules,
                  finish=identity,
                  doc="SemiAnalysis InferenceX public API: third-party measured observations")
