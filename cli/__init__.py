"""The ``perfledger`` command, on top of ``ingest``, ``warehouse`` and ``api`` (it may import
all three; none of them imports it)."""
