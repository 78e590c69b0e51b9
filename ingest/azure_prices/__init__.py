"""Azure Retail Prices (GPU VM list prices, versioned; evidence ``list_price``).

    fetch.py   walk the API's pages (NextPageLink, $skip recovery, fetch-ahead)
    parse.py   one page → typed rows (offer, OS, hourly price)
    load.py    the sources.toml section, and versioning in SQL (a change closes the old row)
    suite.py   validation rules for azure_price
"""

from ingest.azure_prices import suite
from ingest.azure_prices.load import AzureConfig, load
from ingest.context import SourceSpec

SPEC = SourceSpec(name="azure_prices", config=AzureConfig, load=load, rules=suite.rules,
                  doc="Azure Retail Prices API: GPU VM prices, versioned")
