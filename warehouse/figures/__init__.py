"""The figures derived from the tables: the SQL views, the frontier, the InferenceX
reconciliation, the calculators and their inputs, accelerator coverage."""
