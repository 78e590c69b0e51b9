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

import sys

# httpx imports its optional command-line tool (``httpx._main``, which loads rich, pygments and
# click: ~0.13 s of CPU, a tenth of a no-change refresh) whenever those happen to be installed,
# as they are here for typer and the validate table. perfledger never runs that tool. A module
# set to None in ``sys.modules`` is how Python says "not installed": the import raises
# ImportError, which httpx catches exactly as when its ``cli`` extra is not installed.
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]

