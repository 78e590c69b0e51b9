"""The write side of perfledger: the HTTP client, the source registry and ``sources.toml``
schema, the refresh pipeline, and one folder per source.

    http.py        the one fetch path (retries, conditional requests, local files), redaction
    context.py     the contract between the pipeline and a source (SourceSpec, LoadContext)
    registry.py    every source, in refresh order
    config.py      sources.toml: one section per registered source
    refresh.py     lock → load each source → derive → validate → publish
    scheduler.py   background refreshes for single-process deployments
    versions.py    price versions in SQL (both price sources)
    jsonsafe.py    strict JSON for every source
    mirror/        the built-in mirror: carried copies of real upstream files, with provenance
    mlperf/ mlperf_rules/ azure_prices/ cloud_prices/ curated/ inferencex/   one folder per
                   source (registry.py), and selfmeasured/ for `perfledger import`

``ingest`` stands on ``warehouse`` and is never imported by ``api``.
"""
