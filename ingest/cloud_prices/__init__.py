"""Every cloud's GPU list prices from the SkyPilot catalog (evidence ``list_price``), versioned.

    parse.py     one cloud's vms.csv → typed rows (columns by name, sentinels refused, GCP's
                 host + GPU rows summed); a malformed file names file, line and column
    identity.py  data/cloud_accelerators.yaml: (cloud, instance type, name) → accelerator id
    load.py      the sources.toml section; each cloud fetched at its pinned commit (or read
                 from the built-in mirror's sample), versioned as Azure prices are
    backfill.py  earlier commits of the catalog, for a bounded window
    coverage.py  per cloud, the GPU rows mapped, unmapped and ambiguous (after every refresh)
    suite.py     trust checks of cloud_price
"""

from ingest.cloud_prices import suite
from ingest.cloud_prices.coverage import coverage
from ingest.cloud_prices.load import CloudPricesConfig, load
from ingest.context import SourceSpec

SPEC = SourceSpec(name="cloud_prices", config=CloudPricesConfig, load=load, rules=suite.rules,
                  finish=coverage,
                  doc="SkyPilot catalog: every cloud's GPU list prices, versioned")
