"""perfledger ingesters: one module per source, each with ``fetch`` and ``parse``."""
