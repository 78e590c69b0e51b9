"""The throughput–interactivity frontier as one SQL query (``frontier_sql``).

For a model and an input/output length pair, per accelerator (``series``: the accelerator id,
or the InferenceX hardware key when it maps to none):

1. the **curve**: each configuration's latest run (on or before ``until``) — what InferenceX's
   own as-of answer serves — with its interactivity x (median output tokens/s per user) and
   output tokens/s per GPU y;
2. the **frontier**: the curve points no other point of the same series beats on both axes
   (x' >= x and y' >= y, one strictly); identical points are both kept;
3. at a requested interactivity x0, the **answer**: y linearly interpolated between the two
   neighbouring frontier points (x1 <= x0 < x2), the point itself when x0 is one, and
   ``out of range`` with the nearest frontier point when x0 is outside [min x, max x] — never
   extrapolated;
4. **MLPerf** results of the same model family and accelerators on the same axes, never mixed
   into the curve: y = result / accelerators; x = the rules' per-user floor 1000 / TPOT limit
   for Server and Interactive, 0 for Offline (no per-user requirement).

Each point carries the cost per million output tokens (an assumed rate per GPU-hour, and the
cheapest current Azure list price per accelerator-hour where Azure rents the accelerator) and
the energy per output token where one is valid — InferenceX's GPU-only figure, MLPerf's
whole-system wall power — with the scope in words, since the two are not comparable.
Values are bound parameters (``ask``), in the order ``FRONTIER_PARAMS`` lists.
"""

from __future__ import annotations

from warehouse.figures.calculators import cost_per_million_sql
from warehouse.figures.derived import (
    CONFIG,
    COUNTED,
    FRONTIER_RENAMES,
    GPUS,
    OBSERVED_COST_COLUMNS,
    SYSTEM_KEYS,
    UNIT_JOIN,
    citation_of,
    cited,
    keys,
)
from warehouse.figures.selfmeasured import SOURCE_SELF, tool_name_sql
from warehouse.model.vocabulary import (
    ENERGY_SCOPE_GPU,
    ENERGY_SCOPE_WALL,
    INFERENCEX_ATTRIBUTION,
    MLPERF_COMBINED_NOTICE,
    MLPERF_DATASET_NOTE,
    TOKENS_PER_S,
    Evidence,
    basis,
)
from warehouse.model.vocabulary import sql_text as _lit

# The parameters of ``frontier_sql``, in binding order (with their SQL types).
FRONTIER_PARAMS = (
    ("model", "VARCHAR"), ("isl", "INTEGER"), ("osl", "INTEGER"), ("accs", "VARCHAR[]"),
    ("fws", "VARCHAR[]"), ("precs", "VARCHAR[]"), ("specs", "VARCHAR[]"), ("disagg", "BOOLEAN"),
    ("until", "DATE"), ("x0", "DOUBLE"), ("rate", "DOUBLE"), ("region", "VARCHAR"),
    ("offer", "VARCHAR"), ("os", "VARCHAR"), ("dominated", "BOOLEAN"),
    ("mlperf_division", "VARCHAR[]"), ("ml_accs", "VARCHAR[]"), ("provider", "VARCHAR"),
    ("mlperf_availability", "VARCHAR[]"),
)

# The frontier's columns, in order, and what each holds: its Public model is built from this
# (with the system keys MLPerf's points carry, as mlperf_result describes them).
COLUMNS: dict[str, str] = {
    "kind": ("frontier (Pareto-optimal InferenceX observation), dominated (only with "
             "include_dominated), mlperf (an MLPerf result on the same axes, never part of the "
             "curve) or at_interactivity (the answer at the requested interactivity)."),
    "id": ("inferencex_observation.id; mlperf:<mlperf_result.id>; at:<series>:<interactivity> for"
           " an answer."),
    "series": ("The line the point belongs to: the accelerator id, or the InferenceX hardware key"
               " when it maps to none."),
    "accelerator_id": "Accelerator id.",
    "hardware": "InferenceX hardware key as published.",
    "framework": "Serving framework (InferenceX key, or MLPerf's software stack).",
    "precision": "Recipe precision (InferenceX).",
    "spec_method": "Speculative decoding (InferenceX).",
    "disagg": "Disaggregated prefill/decode (InferenceX).",
    "model": "Model as the source names it (InferenceX raw key, MLPerf model id).",
    "model_id": "Warehouse model id (MLPerf model family).",
    "configuration": ("InferenceX: the configuration in words: raw model key, hardware, "
                      "framework, precision, speculative decoding and parallelism with every GPU "
                      "counted."),
    "isl": "Input tokens (InferenceX; MLPerf uses its dataset's lengths).",
    "osl": "Output tokens (InferenceX).",
    "conc": "Concurrency of the sweep point (InferenceX).",
    "gpus": ("Every GPU the configuration occupies (InferenceX: prefill + decode when "
             "disaggregated) or the system's GPUs (MLPerf: its accelerators x each one's GPUs, "
             "2 for a dual-GPU board)."),
    "prefill_gpus": "InferenceX disaggregated: prefill GPUs.",
    "decode_gpus": "InferenceX disaggregated: decode GPUs.",
    "gpu_count_basis": "InferenceX: how gpus was counted.",
    "interactivity": ("x: output tokens/s per user. InferenceX: the median; MLPerf "
                      "Server/Interactive: the rules' floor 1000 / TPOT limit; MLPerf Offline: 0 "
                      "(no per-user requirement)."),
    "output_tput_per_gpu": ("y: output tokens/s per every GPU (MLPerf: result / gpus). "
                            "For an answer: interpolated, NULL when out of range."),
    "tput_per_gpu": ("Total (input + output) tokens/s per GPU (InferenceX); for an answer "
                     "interpolated between the same two points."),
    "input_tput_per_gpu": "Input tokens/s per every GPU (InferenceX).",
    "output_tput_per_decode_gpu": ("InferenceX's own output figure: divided by the decode GPUs "
                                   "when disaggregated."),
    "status": ("Answers only: interpolated, measured (the interactivity is a frontier point's) or"
               " out of range (never extrapolated)."),
    "requested_interactivity": "Answers only: the interactivity asked for.",
    "left_id": "Answers: the frontier point at or below the requested interactivity.",
    "right_id": "Answers: the frontier point above it (interpolated answers).",
    "nearest_id": "Out-of-range answers: the nearest frontier point.",
    "nearest_interactivity": "Out-of-range answers: its interactivity.",
    "nearest_output_tput_per_gpu": "Out-of-range answers: its throughput per GPU.",
    "measured_interactivity_min": "Answers: the lowest interactivity on the series' frontier.",
    "measured_interactivity_max": "Answers: the highest interactivity on it.",
    "observed_on": "InferenceX observation date.",
    "run_url": "InferenceX run that measured the point.",
    "run_started_at": "When that run started, as published.",
    "scenario": "MLPerf scenario: Offline, Server or Interactive.",
    "round": "MLPerf round.",
    "division": "MLPerf division (closed, open, network).",
    "availability": "MLPerf availability: available, preview or rdi.",
    "preview": "MLPerf: true for a preview result (systems not yet available).",
    "citation": ("MLPerf: the result ID, or where the round publishes none, organisation, system,"
                 " round, division, availability and the results path at a pinned commit."),
    "lengths_match": ("MLPerf: whether the result ran at this chart's input/output lengths "
                      "(never: MLPerf runs its own dataset)."),
    "lengths_note": "MLPerf: what lengths the result ran at.",
    **citation_of("an MLPerf point", links=True),
    "system_name": "MLPerf system.",
    "organization": "MLPerf submitter.",
    "tpot_limit_ms": "MLPerf: the p99 TPOT limit the per-user floor comes from.",
    "rate_per_accelerator_hour": "Assumed USD per GPU-hour (evidence: assumption).",
    "cost_per_million_tokens": ("rate / (output tokens/s per every GPU x 3600) x 1e6, USD per "
                                "million output tokens."),
    "list_price_per_accelerator_hour": ("Cheapest current Azure list price per accelerator-hour "
                                        "in the region/offer/OS asked; NULL where Azure does not "
                                        "rent it."),
    "list_price_sku": "The Azure VM size of that price.",
    "list_price_cost_per_million_tokens": ("Cost per million output tokens at that list price; "
                                           "NULL without one."),
    "list_price_cost_per_million_total_tokens": ("Cost per million total tokens at that list "
                                                 "price."),
    "cost_per_million_input_tokens": "rate / (input tokens/s per GPU x 3600) x 1e6 (InferenceX).",
    "cost_per_million_total_tokens": "rate / (total tokens/s per GPU x 3600) x 1e6 (InferenceX).",
    "joules_per_output_token": ("Energy per output token where valid: InferenceX only with "
                                "power_valid 1 on schema 2 (GPU power); MLPerf from its "
                                "wall-power run. See energy_scope."),
    "energy_scope": ("What the energy figure measures; InferenceX GPU power and MLPerf wall power"
                     " are not comparable."),
    "power_status": "InferenceX power verdict (valid, invalid, legacy_unverified\u2026).",
    "evidence": ("third_party_measured (InferenceX), measured (MLPerf) or derived (an "
                 "interpolated answer)."),
    "measurer": "Who measured the point.",
    "cost_basis": "Evidence basis of the cost figures.",
    "notice": "Attribution: InferenceX's, or MLCommons' derived-result notice.",
    "combined": "Every row: the answer combines MLPerf with non-MLPerf results, and how.",
    "source": ("inferencex or self_measured (a run the user imported, on the hardware they "
               "stated): a self-measured series is its own line."),
    "tool": "Self-measured: the benchmark tool (vllm, sglang, aiperf, guidellm, llmperf).",
    "tool_version": "Self-measured: the tool's version, where the file records it.",
    "import_id": "Self-measured: self_import.id of the imported file.",
    "file_name": "Self-measured: the imported file's name.",
    "file_sha256": "Self-measured: sha256 of the imported file's bytes.",
    "interactivity_basis": ("Self-measured: how the tool's figures give the interactivity (its "
                            "definitions differ)."),
}

# The configuration in words: raw model key, hardware, framework, precision, speculation and
# parallelism (every GPU counted, as ``gpus`` is).
CONFIGURATION = """CASE WHEN o.source = '""" + SOURCE_SELF + """' THEN o.model || ' on '
    || o.gpus || ' x ' || o.accelerator_id || ' (stated), ' || o.framework || ' '
    || o.precision || ', self-measured with ' || """ + tool_name_sql("o.tool") + """
    || coalesce(' ' || o.tool_version, '') || ' (' || o.file_name || ', run '
    || o.run_index || ')' ELSE o.model || ' ' || o.hardware || ' ' || o.framework || ' ' || o.precision
    || ' spec=' || coalesce(o.spec_method, 'none') || CASE WHEN o.disagg
    THEN ' disagg: prefill ' || o.prefill_gpus || ' GPUs (TP' || o.prefill_tp || ' EP'
         || o.prefill_ep || ' x' || coalesce(o.prefill_num_workers, 1) || '), decode '
         || o.decode_gpus || ' GPUs (TP' || o.decode_tp || ' EP' || o.decode_ep || ' x'
         || coalesce(o.decode_num_workers, 1) || ')'
    ELSE ' agg: ' || o.gpus || ' GPUs (TP' || o.decode_tp || ' EP' || o.decode_ep || ' PP'
         || coalesce(o.pp, 1) || ')' END
    || CASE WHEN o.decode_dp_attention THEN ' dp-attention' ELSE '' END END"""
# A self-measured series is its own line per accelerator and tool (tools define per-user
# speed differently), labelled so: never mixed into InferenceX's curve of the accelerator.
SERIES = ("CASE WHEN o.source = '" + SOURCE_SELF + "' THEN o.accelerator_id || "
          "' (self-measured, ' || " + tool_name_sql("o.tool") + " || ')' "
          "ELSE coalesce(o.accelerator_id, o.hardware_base) END")
SELF_BASIS = basis(Evidence.self_measured, Evidence.assumption)
# An observation's attribution; a self-measured run's says how its tool defines the figures.
ATTRIBUTED = ("CASE WHEN {o}.source = '" + SOURCE_SELF + "' THEN {o}.attribution || ' ' || "
              "{o}.definition_note ELSE {o}.attribution END AS notice")

IX_BASIS = basis(Evidence.third_party_measured, Evidence.assumption)
ML_BASIS = basis(Evidence.measured, Evidence.benchmark_rule, Evidence.assumption)
ANSWER_NOTE = (INFERENCEX_ATTRIBUTION + ". Interpolated by perfledger between the two "
               "neighbouring frontier points; not an InferenceX measurement.")
MEASURED_NOTE = INFERENCEX_ATTRIBUTION + ". The frontier point itself (measured by InferenceX)."
SELF_ANSWER_NOTE = ("A self-measured series (the user's imported runs, hardware as stated): "
                    "interpolated by perfledger between its neighbouring frontier points, or "
                    "the nearest point when out of range; never extrapolated.")
OUT_OF_RANGE_NOTE = (INFERENCEX_ATTRIBUTION + ". Out of the measured range of interactivity: "
                     "the nearest frontier point is given; nothing is extrapolated.")


EVIDENCE_SOURCE = {Evidence.measured: "mlperf", Evidence.third_party_measured: "inferencex",
                   Evidence.self_measured: SOURCE_SELF}


def cost_input_sql(kinds: list[str]) -> tuple[str, list]:
    """The rows /v1/costs prices, of the evidence ``kinds`` names: MLPerf's (cost_input) and
    current, reconciled observations as systems of their every GPU serving their output
    tokens/s (so the one cost formula charges each GPU: rate / (tokens/s per GPU x 3600) x
    1e6), labelled like the frontier's; each with its evidence. SQL and bound parameters."""
    # MLPerf's rows (none when not asked: their columns, typed) and the observation columns
    parts = ["SELECT *, 'measured' AS evidence, " + ", ".join(
        f"NULL::{t} AS {c}" for c, t in OBSERVED_COST_COLUMNS) + " FROM cost_input WHERE ?"]
    params: list[object] = [Evidence.measured in kinds]
    observed = [k for k in kinds if k != Evidence.measured]
    if observed:
        parts.append(f"""SELECT o.id, o.measurer AS organization, o.hardware AS platform,
       {CONFIGURATION} AS system_name, coalesce(o.model_id, o.model) AS model_id,
       o.model_id AS model_family, o.output_tput_per_gpu * o.gpus AS result,
       {_lit(TOKENS_PER_S)} AS units, o.gpus AS total_accelerators, o.accelerator_id,
       {ATTRIBUTED.format(o="o")}, o.evidence,
       {", ".join("o." + c for c, _ in OBSERVED_COST_COLUMNS)}
FROM observation o
WHERE o.current AND o.reconciled AND o.gpus > 0 AND o.output_tput_per_gpu > 0
  AND list_contains(?::VARCHAR[], o.evidence)""")
        params.append(observed)
    return "(" + " UNION ALL BY NAME ".join(f"({p})" for p in parts) + ")", params


def _costs(alias: str, out: str, total: str | None, inp: str | None) -> str:
    """The cost columns of one row: per million output, input and total tokens at the assumed
    rate, per million output and total tokens at the list price; every GPU charged (the
    figures are per every GPU)."""
    def cost(rate: str, tps: str | None) -> str:
        return "NULL::DOUBLE" if tps is None else cost_per_million_sql(rate, tps)
    return f"""ask.rate AS rate_per_accelerator_hour,
       {cost("ask.rate", out)} AS cost_per_million_tokens,
       {cost("ask.rate", inp)} AS cost_per_million_input_tokens,
       {cost("ask.rate", total)} AS cost_per_million_total_tokens,
       lp.rate AS list_price_per_accelerator_hour, lp.sku AS list_price_sku,
       {cost("lp.rate", out)} AS list_price_cost_per_million_tokens,
       {cost("lp.rate", total)} AS list_price_cost_per_million_total_tokens,
       {_lit(MLPERF_COMBINED_NOTICE)} AS combined
FROM {alias} CROSS JOIN ask LEFT JOIN lp ON lp.accelerator_id = {alias.split()[-1]}.accelerator_id"""


def frontier_sql() -> str:
    """The frontier query: rows of kind frontier (and dominated when asked), mlperf and
    at_interactivity (one per series when an interactivity is asked), united by name."""
    ask = ", ".join(f"?::{t} AS {n}" for n, t in FRONTIER_PARAMS)
    return f"\nWITH ask AS (SELECT {ask}),\n" + _curve_ctes() + _mlperf_ctes() + _rows()


def _curve_ctes() -> str:
    """The observations asked for, each configuration's latest run (the curve), its
    frontier, and the answer at the asked interactivity per series."""
    return f"""obs AS (
    SELECT o.*, {SERIES} AS series,
           o.interactivity AS x, o.output_tput_per_gpu AS y, {CONFIGURATION} AS configuration
    FROM observation o, ask
    WHERE o.current AND o.reconciled
      AND (o.model_id = ask.model OR o.model = ask.model OR lower(o.model_display) = lower(ask.model))
      AND o.isl = ask.isl AND o.osl = ask.osl
      AND o.interactivity > 0 AND o.output_tput_per_gpu > 0
      AND (len(ask.accs) = 0 OR list_contains(ask.accs, o.accelerator_id)
           OR list_contains(ask.accs, o.hardware_base))
      AND (len(ask.fws) = 0 OR list_contains(ask.fws, lower(o.framework)))
      AND (len(ask.precs) = 0 OR list_contains(ask.precs, lower(o.precision)))
      AND (len(ask.specs) = 0 OR list_contains(ask.specs, lower(coalesce(o.spec_method, 'none'))))
      AND (ask.disagg IS NULL OR o.disagg IS NOT DISTINCT FROM ask.disagg)
      AND (ask.until IS NULL OR o.observed_on <= ask.until)
),
curve AS (  -- each configuration's latest run; every run of an import (one sweep)
    SELECT * FROM obs QUALIFY source = '{SOURCE_SELF}'
        OR observed_on = max(observed_on) OVER (PARTITION BY {CONFIG})
),
flagged AS (
    SELECT c.*, NOT EXISTS (
        SELECT 1 FROM curve d WHERE d.series = c.series AND d.x >= c.x AND d.y >= c.y
                                AND (d.x > c.x OR d.y > c.y)) AS on_frontier
    FROM curve c
),
front AS (SELECT * FROM flagged WHERE on_frontier),
seg AS (
    SELECT series, id, x, y, tput_per_gpu AS t, lead(id) OVER w AS id2, lead(x) OVER w AS x2,
           lead(y) OVER w AS y2, lead(tput_per_gpu) OVER w AS t2
    FROM front WINDOW w AS (PARTITION BY series ORDER BY x, y DESC, id)
),
rng AS (
    SELECT series, min(x) AS lo, max(x) AS hi, arg_min(id, x) AS lo_id, arg_max(id, x) AS hi_id,
           arg_min(y, x) AS lo_y, arg_max(y, x) AS hi_y,
           any_value(accelerator_id) AS accelerator_id, any_value(hardware_base) AS hardware,
           any_value(source) AS source
    FROM front GROUP BY series
),
hit AS (
    SELECT s.* FROM seg s, ask
    WHERE s.x <= ask.x0 AND (s.x2 > ask.x0 OR (s.x2 IS NULL AND s.x = ask.x0))
),
ans AS (
    SELECT r.*, h.id AS hid, h.id2,
           CASE WHEN h.id IS NULL THEN NULL WHEN h.x = ask.x0 THEN h.y
                ELSE h.y + (h.y2 - h.y) * (ask.x0 - h.x) / (h.x2 - h.x) END AS y_at,
           CASE WHEN h.id IS NULL THEN NULL WHEN h.x = ask.x0 THEN h.t
                ELSE h.t + (h.t2 - h.t) * (ask.x0 - h.x) / (h.x2 - h.x) END AS t_at,
           CASE WHEN h.id IS NULL THEN 'out of range' WHEN h.x = ask.x0 THEN 'measured'
                ELSE 'interpolated' END AS status
    FROM rng r CROSS JOIN ask LEFT JOIN hit h ON h.series = r.series
),
"""


def _mlperf_ctes() -> str:
    """The model's MLPerf family, the cheapest current list price per accelerator, and the
    MLPerf results placed on the frontier's axes."""
    return f"""model_ids AS (
    SELECT DISTINCT target_id AS model_family FROM inferencex_alias, ask
    WHERE kind = 'model' AND target_id IS NOT NULL
      AND (target_id = ask.model OR key = ask.model OR lower(display) = lower(ask.model))
    UNION SELECT DISTINCT model_id FROM obs WHERE model_id IS NOT NULL  -- self-measured too
),
lp AS (  -- Azure in one region (no provider asked), else one provider or the cheapest of any
    SELECT p.accelerator_id, min(p.price_per_accelerator_hour) AS rate,
           arg_min(p.arm_sku_name, p.price_per_accelerator_hour) AS sku
    FROM accelerator_hour_price p, ask
    WHERE ask.provider IS NULL AND p.valid_to IS NULL
      AND lower(p.arm_region_name) = lower(ask.region) AND p.offer = ask.offer AND p.os = ask.os
    GROUP BY p.accelerator_id
    UNION ALL
    SELECT p.accelerator_id, p.price_per_accelerator_hour, p.provider || ': ' || p.instance_type
    FROM provider_price p, ask
    WHERE ask.provider IS NOT NULL AND p.valid_to IS NULL AND p.offer = ask.offer
      AND (ask.provider = 'cheapest' OR p.provider = ask.provider)
    QUALIFY row_number() OVER (PARTITION BY p.accelerator_id ORDER BY
                               p.price_per_accelerator_hour, p.provider, p.instance_type) = 1
),
ml AS (
    SELECT r.*, CASE WHEN r.scenario = 'Offline' THEN 0.0
                     ELSE lb.min_tokens_per_s_per_user END AS x,
           r.result / {GPUS} AS y, {GPUS} AS gpus, lb.tpot_ms, lb.rule_id,
           e.joules_per_unit AS wall_joules_per_token
    FROM mlperf_result r
    CROSS JOIN ask
    {UNIT_JOIN}
    LEFT JOIN latency_bound lb ON lb.id = r.id
    LEFT JOIN energy_efficiency e ON e.id = r.id
    WHERE NOT r.is_power AND r.units = {_lit(TOKENS_PER_S)} AND {COUNTED}
      AND r.scenario IN ('Offline', 'Server', 'Interactive')
      AND r.model_family IN (SELECT model_family FROM model_ids)
      AND (len(ask.mlperf_division) = 0 OR list_contains(ask.mlperf_division, r.division))
      AND (len(ask.mlperf_availability) = 0
           OR list_contains(ask.mlperf_availability, r.availability))
      AND r.accelerator_id IS NOT NULL
      AND (list_contains(ask.ml_accs, r.accelerator_id)
           OR CASE WHEN len(ask.accs) = 0
                   THEN r.accelerator_id IN (SELECT accelerator_id FROM obs)
                        OR NOT EXISTS (SELECT 1 FROM obs)
                   ELSE list_contains(ask.accs, r.accelerator_id) END)
)
"""


def _rows() -> str:
    """Rows of kind frontier (and dominated when asked), mlperf (each cited) and
    at_interactivity (one per series when an interactivity is asked), united by name."""
    return f"""SELECT CASE WHEN f.on_frontier THEN 'frontier' ELSE 'dominated' END AS kind,
       f.id AS id, f.series, f.accelerator_id, f.hardware, f.framework, f.precision,
       f.spec_method, f.disagg, f.model, f.model_id, f.configuration, f.isl, f.osl, f.conc,
       f.gpus, f.prefill_gpus, f.decode_gpus, f.gpu_count_basis,
       f.x AS interactivity, f.y AS output_tput_per_gpu, f.tput_per_gpu, f.input_tput_per_gpu,
       f.output_tput_per_decode_gpu, f.observed_on, f.run_url, f.run_started_at,
       CASE WHEN f.power_status = 'valid' THEN f.joules_per_output_token END AS joules_per_output_token,
       CASE WHEN f.power_status = 'valid' THEN {_lit(ENERGY_SCOPE_GPU)} END AS energy_scope,
       f.power_status, f.evidence, f.measurer,
       CASE WHEN f.source = '{SOURCE_SELF}' THEN {_lit(SELF_BASIS)} ELSE {_lit(IX_BASIS)} END
           AS cost_basis,
       {ATTRIBUTED.format(o="f")},
       f.source, f.tool, f.tool_version, f.import_id, f.file_name, f.file_sha256,
       f.interactivity_basis,
       {_costs("flagged f", "f.y", "f.tput_per_gpu", "f.input_tput_per_gpu")}
WHERE f.on_frontier OR ask.dominated
UNION ALL BY NAME
SELECT 'mlperf' AS kind, 'mlperf:' || m.id AS id, m.accelerator_id AS series, m.accelerator_id,
       m.framework, m.model_id AS model, m.model_family AS model_id,
       m.gpus, m.x AS interactivity, m.y AS output_tput_per_gpu,
       m.scenario, {keys("m", SYSTEM_KEYS, but=FRONTIER_RENAMES)}, m.availability,
       m.availability = 'preview' AS preview, {cited("m")},
       coalesce('MLPerf Inference ' || m.round || ' result ' || m.system_id,
                m.organization || ', ' || m.system_name || ', MLPerf Inference ' || m.round
                || ' (' || m.division || ', ' || m.availability || '), ' || m.details_url)
           AS citation,
       false AS lengths_match, {_lit(MLPERF_DATASET_NOTE)} AS lengths_note,
       m.tpot_ms AS tpot_limit_ms,
       m.wall_joules_per_token AS joules_per_output_token,
       CASE WHEN m.wall_joules_per_token IS NOT NULL THEN {_lit(ENERGY_SCOPE_WALL)} END
           AS energy_scope,
       m.evidence, 'MLCommons MLPerf Inference' AS measurer, {_lit(ML_BASIS)} AS cost_basis,
       {_costs("ml m", "m.y", None, None)}
WHERE m.x IS NOT NULL
UNION ALL BY NAME
SELECT 'at_interactivity' AS kind, 'at:' || a.series || ':' || CAST(ask.x0 AS VARCHAR) AS id,
       a.series, a.accelerator_id, a.hardware, ask.isl AS isl, ask.osl AS osl,
       ask.x0 AS interactivity, a.y_at AS output_tput_per_gpu, a.t_at AS tput_per_gpu,
       a.status, ask.x0 AS requested_interactivity, a.hid AS left_id,
       CASE WHEN a.status = 'interpolated' THEN a.id2 END AS right_id,
       CASE WHEN a.hid IS NOT NULL THEN NULL WHEN ask.x0 < a.lo THEN a.lo_id ELSE a.hi_id END
           AS nearest_id,
       CASE WHEN a.hid IS NOT NULL THEN NULL WHEN ask.x0 < a.lo THEN a.lo ELSE a.hi END
           AS nearest_interactivity,
       CASE WHEN a.hid IS NOT NULL THEN NULL WHEN ask.x0 < a.lo THEN a.lo_y ELSE a.hi_y END
           AS nearest_output_tput_per_gpu,
       a.lo AS measured_interactivity_min, a.hi AS measured_interactivity_max,
       {_lit(Evidence.derived.value)} AS evidence, a.source,
       CASE WHEN a.source = '{SOURCE_SELF}' THEN {_lit(SELF_BASIS)} ELSE {_lit(IX_BASIS)} END
           AS cost_basis,
       CASE WHEN a.source = '{SOURCE_SELF}' THEN {_lit(SELF_ANSWER_NOTE)}
            ELSE CASE a.status WHEN 'interpolated' THEN {_lit(ANSWER_NOTE)}
                     WHEN 'measured' THEN {_lit(MEASURED_NOTE)}
                     ELSE {_lit(OUT_OF_RANGE_NOTE)} END END AS notice,
       {_costs("ans a", "a.y_at", "a.t_at", None)}
WHERE ask.x0 IS NOT NULL
"""
