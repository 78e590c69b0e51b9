"""perfledger's core, which ``ingest`` and ``api`` stand on (and which imports neither), grouped
by concern: ``model`` (tables, vocabulary, Public models, dictionary), ``figures`` (derived
views, frontier, calculators, coverage), ``storage`` (snapshots, staging, bulk loading,
export), ``quality`` (validation runner and core suites, health), ``queries`` (read queries);
settings, the exception tree and redaction beside them."""
