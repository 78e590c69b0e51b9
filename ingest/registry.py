"""The source registry: every source perfledger refreshes, in refresh order.

Adding a source is one folder under ``ingest/`` (fetch, parse, load, suite, and a ``SPEC`` in
its ``__init__``) plus one line here. Curated comes first: MLPerf's accelerator mapping reads
its aliases.
"""

from __future__ import annotations

from ingest import azure_prices, cloud_prices, curated, inferencex, mlperf, mlperf_rules
from ingest.context import SourceSpec

SOURCES: list[SourceSpec] = [
    curated.SPEC,
    mlperf.SPEC,
    mlperf_rules.SPEC,
    azure_prices.SPEC,
    cloud_prices.SPEC,
    inferencex.SPEC,
]
BY_NAME: dict[str, SourceSpec] = {s.name: s for s in SOURCES}
