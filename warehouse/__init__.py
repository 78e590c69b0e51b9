"""perfledger warehouse: schema, snapshots, refresh, validation, derived figures, CLI."""
