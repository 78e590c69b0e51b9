"""Self-measured runs: benchmark result files the user imports (evidence ``self_measured``).

    fields.py    reading one run: figures checked (finite, not negative), units to seconds
    runs.py      what a parser returns; the figures every tool's run derives the same way
    vllm.py, sglang.py, aiperf.py, guidellm.py, llmperf.py
                 one parser per tool: its file's keys, units and definitions
    detect.py    which tool wrote a file, from its keys
    load.py      import and removal as a source of one refresh run (staging → validate →
                 publish), idempotent by the file's sha256
    suite.py     validation rules for self_observation and self_import

Not in the registry: nothing is fetched on a schedule; ``perfledger import`` runs it.
"""
