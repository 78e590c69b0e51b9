"""Curated files in ``data/``, reviewed like code: claims, hardware specs, model shapes,
accelerator aliases (never ``measured``).

    files.py   the YAML files' schemas (pydantic): what a claim, spec, shape, alias must say
    parse.py   read and check the files; rows for each table
    load.py    the sources.toml section; replace the tables, keep claim history
    suite.py   validation rules for claims, specs and model shapes
"""

from ingest.context import SourceSpec
from ingest.curated import suite
from ingest.curated.load import CuratedConfig, load

SPEC = SourceSpec(name="curated", config=CuratedConfig, load=load, rules=suite.rules,
                  doc="curated claims, hardware specs, model shapes, accelerator aliases")
