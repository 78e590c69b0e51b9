"""Self-measured runs in the observation model: the SQL that puts ``self_observation`` rows in
InferenceX's columns (the view ``observation`` unites both), and the words that label them.

Per GPU means per every GPU here too: the importer states how many accelerators the serving
deployment occupied (``gpus``), and every throughput the tool reports for the whole deployment
is divided by that count. There is no publisher whose invariants could be checked: rows are
``reconciled`` (nothing to break) and ``gpu_count_basis`` says the count was stated.
"""

from __future__ import annotations

from warehouse.model.vocabulary import sql_text as _lit

SOURCE_SELF = "self_measured"
COUNT_BASIS = "stated at import (perfledger import --count): every accelerator the run used"
MEASURER = "self-measured (imported with perfledger import)"
ATTRIBUTION = ("Self-measured run imported by this warehouse's user with the hardware they "
               "stated; the file's tool, version and sha256 are on the row.")
TOOL_NAMES = {"vllm": "vLLM", "sglang": "SGLang", "aiperf": "AIPerf", "guidellm": "GuideLLM",
              "llmperf": "LLMPerf"}


def tool_name_sql(column: str) -> str:
    """A tool key as its name (vllm → vLLM)."""
    cases = " ".join(f"WHEN {_lit(k)} THEN {_lit(v)}" for k, v in TOOL_NAMES.items())
    return f"CASE {column} {cases} ELSE {column} END"


def observation_sql() -> str:
    """``self_observation`` rows in the observation view's columns (united BY NAME); only
    this module's constants are formatted in."""
    return f"""
SELECT s.* EXCLUDE (output_tput, total_tput, gpus, imported_at, model),
       s.model,
       {_lit(SOURCE_SELF)} AS source, s.id AS observation_key, s.accelerator_id AS hardware,
       s.accelerator_id AS hardware_base,
       m.model_id, CASE WHEN m.model_id IS NULL THEN 'unmapped' ELSE 'mapped' END AS model_mapping,
       'stated' AS hardware_mapping, s.gpus, {_lit(COUNT_BASIS)} AS gpu_count_basis,
       s.total_tput / s.gpus AS tput_per_gpu,
       (s.total_tput - s.output_tput) / s.gpus AS input_tput_per_gpu,
       s.output_tput / s.gpus AS output_tput_per_gpu,
       'none' AS power_status,
       {_lit(MEASURER)} AS measurer, {_lit(ATTRIBUTION)} AS attribution,
       s.imported_at AS valid_from, NULL::TIMESTAMPTZ AS valid_to,
       s.imported_at AS first_seen_at, true AS reconciled, true AS current,
       NULL::VARCHAR AS invariant_failures
FROM self_observation s
LEFT JOIN (SELECT i.id, CASE WHEN i.model_mapping = 'mapped' THEN i.model END AS model_id
           FROM self_import i) m ON m.id = s.import_id"""  # noqa: S608


def list_imports(con) -> list[dict]:  # noqa: ANN001 - a DuckDB connection
    """Every import on record, newest first: removed ones too (removal is recorded)."""
    from warehouse.storage.db import fetch_dicts

    return fetch_dicts(con, """
        SELECT id, file_name, tool, tool_version, schema_version, runs, model, model_mapping,
               accelerator_id, gpus, framework, precision, note, imported_at, removed_at,
               imported_by_run, removed_by_run, file_sha256
        FROM self_import ORDER BY imported_at DESC, id""")
