"""The write side of perfledger: the HTTP client, the source registry and ``sources.toml``
schema, the refresh pipeline, and one folder per source.

    http.py        the one fetch path (retries, conditional requests, local files), redaction
    context.py     the contract between the pipeline and a source (SourceSpec, LoadContext)
    registry.py    every source, in refresh order
    config.py      sources.toml: one section per registered source
    refresh.py     lock → load each source → derive → validate → publish
    scheduler.py   background refreshes for single-process deployments
    mlperf/ mlperf_rules/ azure_prices/ curated/   one folder per source

``ingest`` stands on ``warehouse`` and is never imported by ``api``.
"""
