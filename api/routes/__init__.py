"""Routes, one module per resource; each route parses parameters and calls warehouse.queries."""
