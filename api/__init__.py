"""perfledger REST API: thin, read-only routes over warehouse queries."""
