"""Where snapshots live: the data directory and its atomic publish, staging a new snapshot,
bulk loading through DuckDB, the Parquet export."""
