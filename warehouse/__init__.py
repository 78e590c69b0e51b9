"""perfledger's core, which ``ingest`` and ``api`` stand on (and which imports neither):
settings, the exception tree, the vocabulary, the schema and Public models, snapshot storage,
the validation runner and core suites, derived views, read queries, calculators."""
