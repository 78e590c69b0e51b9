"""Derived figures as documented SQL views, so analysts and the API see the same numbers.

Every view lists its inputs (ids of the rows it was computed from) and its evidence basis
(``derived: measured``, ``derived: measured + assumption``…): the weakest label among the
inputs is always visible. Figures computed from MLPerf results carry MLCommons' notice
(``notice``) and the result's MLPerf ID and details link. Views are recreated in every staged
snapshot.

Column comments say what *this* view's column holds: the view's own text, else the text of
the same-named column of a relation it declares it passes columns through from
(``inherits``), else a meaning common to several views (``column_meaning``). A column is never
described by an unrelated table's column of the same name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import cache

import duckdb

from warehouse.figures import reconcile, selfmeasured
from warehouse.figures.calculators import cost_per_million_sql
from warehouse.model.vocabulary import (
    ASSUMED_RATES,
    CLAIM_LABELS,
    HOURLY_UNITS,
    INFERENCEX_ATTRIBUTION,
    LATENCY_SCENARIOS,
    LATENCY_UNITS,
    MILLIJOULES_UNIT,
    MLPERF_DERIVED_NOTICE,
    OFFERS,
    OFFERS_SAID,
    PER_USER_SPEED_METRICS,
    QUERIES_PER_S,
    SAMPLES_PER_S,
    THROUGHPUT_SCENARIOS,
    THROUGHPUT_UNITS,
    TOKENS_PER_S,
    WATTS_UNIT,
    Evidence,
    basis,
    label_comment,
    sql_list,
)
from warehouse.model.vocabulary import sql_text as _lit

# Vocabulary terms as SQL literals, so the views spell nothing by hand.
TOKENS = _lit(TOKENS_PER_S)
WATTS = _lit(WATTS_UNIT)
MILLIJOULES = _lit(MILLIJOULES_UNIT)
SAMPLES = _lit(SAMPLES_PER_S)
QUERIES = _lit(QUERIES_PER_S)
THROUGHPUT = sql_list(THROUGHPUT_SCENARIOS)
LATENCY = sql_list(LATENCY_SCENARIOS)
MEASURED = _lit(Evidence.measured)
LIST_PRICE = _lit(Evidence.list_price)
ASSUMPTION = _lit(Evidence.assumption)
# MLCommons' results guidelines: every figure computed from MLPerf results says so, on every
# row, so a CSV export or a SQL analyst's query carries it as the API does.
NOTICE = _lit(MLPERF_DERIVED_NOTICE) + " AS notice"

# Column groups the relations share; the Public models (warehouse.model.public) expand the same
# names. An MLPerf result's identity and figure, passed through unchanged; the lineage every
# derived row reports; the citation of the result a row derives from.
# The system's keys (every relation of MLPerf rows carries them, pairs and trends included:
# a column added here reaches each derived relation and its API model), then the result's.
SYSTEM_KEYS = ("round", "division", "organization", "platform", "system_name", "model_id",
               "model_family")
# The system keys the frontier names otherwise (its model is the result's model id, its
# model_id the family, as for InferenceX rows); every other one passes through it.
FRONTIER_RENAMES = ("model_id", "model_family")
MLPERF_KEYS = (*SYSTEM_KEYS, "scenario", "result", "units", "total_accelerators",
               "accelerator_id")
LINEAGE = ("basis", "weakest_input")
# The citation columns and what they hold, of the result ``whose`` names (written once).
CITATION_MEANINGS = {
    "mlperf_id": "MLPerf result ID of {whose} as MLCommons publishes it (mlperf_result.system_id, "
                 "e.g. 5.1-0001); NULL where the round's file has none (summary.csv)",
    "details_url": "Details link of {whose} (mlperf_result.details_url); NULL when unknown",
    "notice": "MLCommons' results guidelines notice, on every row: the figure is derived from "
              "MLPerf Inference results and not verified by MLCommons"}
CITATION = tuple(CITATION_MEANINGS)


def keys(alias: str, group: tuple[str, ...] = MLPERF_KEYS, but: tuple[str, ...] = ()) -> str:
    """The MLPerf keys (or another ``group``) of the result ``alias`` but ``but``, for a
    SELECT list."""
    return ", ".join(f"{alias}.{c}" for c in group if c not in but)


def cited(alias: str, prefix: str = "") -> str:
    """The citation of the MLPerf result ``alias``, for a SELECT list: its ID and details link
    under the names CITATION gives them (``prefix``ed), and, unprefixed, MLCommons' notice."""
    link = f"{alias}.system_id AS {prefix}{CITATION[0]}, {alias}.{CITATION[1]} AS {prefix}{CITATION[1]}"
    return link if prefix else f"{link}, {NOTICE}"


def citation_of(whose: str, prefix: str = "", links: bool = False) -> dict[str, str]:
    """The comments of the citation columns of the result ``whose`` names (``prefix``ed, or
    ``links``: the ID and link alone, as ``cited`` writes them)."""
    return {prefix + c: text.format(whose=whose) for c, text in CITATION_MEANINGS.items()
            if not ((prefix or links) and c == CITATION[2])}


def carried(alias: str) -> str:
    """The citation columns of a relation that already has them (``alias``)."""
    return ", ".join(f"{alias}.{c}" for c in CITATION)

VIEWS: dict[str, tuple[str, str, dict[str, str]]] = {}
# Per view, the relations (tables, or views registered before it) whose same-named columns it
# passes through unchanged, first match first: their comments describe those columns.
INHERITS: dict[str, tuple[str, ...]] = {}
# Per derived view, the evidence labels its weakest_input can hold.
WEAKEST: dict[str, frozenset[str]] = {}
# Per view, words added to the meaning of a column it passes through (a view over two sources
# says what the second holds there), read when the comments are written.
PASSED_NOTE: dict[str, Callable[[str], str | None]] = {}


def view(name: str, comment: str, columns: dict[str, str] | None = None, *,
         inherits: Iterable[str] = (), weakest: Iterable[str] = (),
         passed_note: Callable[[str], str | None] | None = None):
    """Register a view's SQL with its comment, its own column comments, the relations it
    passes columns through from (``inherits``) and, for a derived view, the labels its
    ``weakest_input`` can hold (its comment names exactly those)."""
    cols = dict(columns or {})
    labels = frozenset(weakest)
    if labels:
        WEAKEST[name] = labels
        cols.setdefault("weakest_input", label_comment(
            labels, "The weakest evidence label among the row's inputs"))

    def register(sql: str) -> str:
        VIEWS[name] = (sql, comment, cols)
        INHERITS[name] = tuple(inherits)
        if passed_note is not None:
            PASSED_NOTE[name] = passed_note
        return sql
    return register


view("scenario_ratio",
     "Server/Offline and Interactive/Offline throughput ratios for the same system, model, round "
     "and division. Tokens/s pairs with Tokens/s; an Offline Samples/s or Tokens/s result with a "
     "Queries/s one is kept but flagged (unit_pairing = samples_vs_queries or tokens_vs_queries: "
     "MLPerf reports some benchmarks in two units). Power rows are never paired.",
     {"scenario": "Server or Interactive: the scenario compared with the same system's Offline",
      "ratio": "other_result / offline_result",
      "interactive_premium": "Interactive rows: offline_result / other_result, the cost multiple "
                             "of serving under the interactive latency limits (NULL for Server "
                             "rows; their ratio says the same)",
      "unit_pairing": "same_units, samples_vs_queries or tokens_vs_queries (MLPerf reports some "
                      "benchmarks in two units)",
      "flagged": "True when the pairing is not like-for-like units",
      "offline_result_id": "mlperf_result.id of the Offline row",
      "other_result_id": "mlperf_result.id of the Server/Interactive row",
      "id": "Stable id of the pair: a hash of both results' ids",
      "basis": "Evidence basis of the ratio; always derived: measured",
      **citation_of("the Offline row", "offline_"),
      **citation_of("the Server/Interactive row", "other_")},
     inherits=("mlperf_result",), weakest=(Evidence.measured,))(
"""
WITH base AS (
    SELECT * FROM mlperf_result
    WHERE NOT is_power AND scenario IN """ + THROUGHPUT + """
)
SELECT substr(md5(o.id || ':' || x.id), 1, 16) AS id, """ + keys("o", SYSTEM_KEYS) + """,
       x.scenario,
       o.result AS offline_result, o.units AS offline_units,
       x.result AS other_result, x.units AS other_units,
       x.result / o.result AS ratio,
       CASE WHEN x.scenario = 'Interactive' THEN o.result / x.result END AS interactive_premium,
       CASE WHEN o.units = x.units THEN 'same_units'
            WHEN o.units = """ + SAMPLES + """ THEN 'samples_vs_queries'
            ELSE 'tokens_vs_queries' END AS unit_pairing,
       o.units <> x.units AS flagged,
       o.accelerator_id, o.accelerator_model_name, o.accelerator_mix, o.total_accelerators,
       o.availability, o.inferred AS offline_inferred, x.inferred AS other_inferred,
       o.id AS offline_result_id, x.id AS other_result_id,
       """ + _lit(basis(Evidence.measured)) + """ AS basis, """ + MEASURED + """ AS weakest_input,
       """ + cited("o", "offline_") + ", " + cited("x", "other_") + ", " + NOTICE + """
FROM base o
JOIN base x
  ON x.round = o.round AND x.division = o.division AND x.organization = o.organization
 AND x.platform = o.platform AND x.model_id = o.model_id
WHERE o.scenario = 'Offline' AND x.scenario IN """ + LATENCY + """
  AND (o.units = x.units OR (o.units IN (""" + SAMPLES + ", " + TOKENS + """)
                             AND x.units = """ + QUERIES + """))
""")

# The datasheet figures the per-accelerator view divides by: memory bandwidth and nameplate
# power (TDP/TBP), vendor_spec only, one row per accelerator.
SPEC_FIGURES = """
SELECT hardware_id,
       any_value(value) FILTER (WHERE metric = 'memory_bandwidth') AS bandwidth,
       any_value(id) FILTER (WHERE metric = 'memory_bandwidth') AS bandwidth_spec_id,
       any_value(value) FILTER (WHERE metric = 'tdp') AS nameplate_w,
       any_value(id) FILTER (WHERE metric = 'tdp') AS nameplate_spec_id
FROM hardware_spec WHERE evidence = """ + _lit(Evidence.vendor_spec) + """ AND value > 0
  AND metric IN ('memory_bandwidth', 'tdp')
GROUP BY hardware_id
"""

# A result whose accelerator count reconciles, the one a per-accelerator figure divides by: a
# count written in the accelerator's name (xN) is the system's or a node's. MLCommons' v6.0
# names the MI355X cluster's accelerator "(x87)" and "(x94)" (its platform 87xMI355X) where
# its published total is 88 and 96: such a row is flagged (the mlperf_result rule), never
# divided, since "per GPU" must be per every GPU and its own words disagree on how many.
def count_contradicted(t: str = "") -> str:
    """SQL over mlperf_result rows (their columns prefixed ``t``, e.g. ``r.``): a count written
    in the accelerator's name (xN) that is neither the system's accelerators nor a node's. A
    count that cannot be compared (too large to read, or a node's accelerators not
    published) contradicts unless it is the total: unknown is never read as agreeing."""
    return (f"regexp_full_match({t}accelerator_instances, 'x\\d+') AND coalesce("
            f"TRY_CAST(substr({t}accelerator_instances, 2) AS INTEGER) NOT IN "
            f"({t}total_accelerators, {t}accelerators_per_node), true)")


COUNTED = f"r.total_accelerators > 0 AND NOT coalesce({count_contradicted('r.')}, false)"


# The GPUs of an mlperf_result row ``r``: its accelerators times each one's GPUs, read from
# the accelerator's own alias row ``u`` (UNIT_JOIN; kind id, ``count``: a dual-GPU board,
# which MLPerf counts as one accelerator, has 2; none said: 1). "Per GPU" divides by every GPU.
UNIT_JOIN = "LEFT JOIN accelerator_alias u ON u.kind = 'id' AND u.alias = r.accelerator_id"
GPUS = "(r.total_accelerators * coalesce(u.count, 1))"


view("result_per_accelerator",
     "Throughput results divided by the system's total accelerators (aggregate, not per user), "
     "and, where the catalogue has the accelerator's datasheet figures (vendor_spec), per TB/s "
     "of memory bandwidth and per kW of nameplate power (TDP/TBP from the datasheet, not "
     "MLPerf's measured power). Such rows report derived: measured + vendor_spec.",
     {"per_accelerator": "result / total_accelerators (per accelerator as MLPerf counts "
                         "them: a dual-GPU board is one)",
      "gpus": "The system's GPUs: total_accelerators x the accelerator's GPUs per unit "
              "(data/accelerators.yaml gpus_per_unit, sourced: 2 for a dual-GPU board; else 1)",
      "per_gpu": "result / gpus: per every GPU",
      "memory_bandwidth_tbs": "The accelerator's datasheet memory bandwidth, TB/s (vendor_spec; "
                              "NULL when the catalogue has none)",
      "nameplate_power_w": "The accelerator's datasheet power (TDP/TBP), W: nameplate, not "
                           "MLPerf's measured power (vendor_spec; NULL when none)",
      "per_accelerator_per_tbs": "per_accelerator / memory_bandwidth_tbs: throughput per "
                                 "accelerator per TB/s of its memory bandwidth",
      "per_accelerator_per_nameplate_kw": "per_accelerator / (nameplate_power_w / 1000): "
                                          "throughput per accelerator per kW of nameplate power",
      "bandwidth_spec_id": "hardware_spec.id of the memory bandwidth used",
      "nameplate_spec_id": "hardware_spec.id of the nameplate power used",
      "basis": "derived: measured, or derived: measured + vendor_spec where the datasheet "
               "figures are catalogued"},
     inherits=("mlperf_result",), weakest=(Evidence.measured, Evidence.vendor_spec))(
"""
WITH fig AS (""" + SPEC_FIGURES + """)
SELECT r.id, """ + keys("r") + """,
       r.accelerator_model_name, r.accelerator_mix, r.availability,
       r.result / r.total_accelerators AS per_accelerator,
       """ + GPUS + """ AS gpus, r.result / """ + GPUS + """ AS per_gpu,
       f.bandwidth / 1e12 AS memory_bandwidth_tbs, f.nameplate_w AS nameplate_power_w,
       r.result / r.total_accelerators / (f.bandwidth / 1e12) AS per_accelerator_per_tbs,
       r.result / r.total_accelerators / (f.nameplate_w / 1000.0)
           AS per_accelerator_per_nameplate_kw,
       r.id AS result_id, f.bandwidth_spec_id, f.nameplate_spec_id,
       CASE WHEN f.hardware_id IS NULL THEN """ + _lit(basis(Evidence.measured)) + """
            ELSE """ + _lit(basis(Evidence.measured, Evidence.vendor_spec)) + """ END AS basis,
       CASE WHEN f.hardware_id IS NULL THEN """ + MEASURED + """
            ELSE """ + _lit(Evidence.vendor_spec) + """ END AS weakest_input,
       """ + cited("r") + """
FROM mlperf_result r
LEFT JOIN fig f ON f.hardware_id = r.accelerator_id
""" + UNIT_JOIN + """
WHERE NOT r.is_power AND r.units IN """ + sql_list(THROUGHPUT_UNITS) + """
  AND """ + COUNTED + """
""")

view("energy_efficiency",
     "Energy efficiency of every throughput result that has a power measurement (a Watts row of "
     "the same system, model, scenario and round): work per joule = result / watts, and joules "
     "per unit of work. Tokens/s results give tokens per joule; Samples/s, samples per joule. "
     "SingleStream/MultiStream results publish energy per query in millijoules: queries per "
     "joule = 1000 / mJ.",
     {"watts": "System power during the run (the power row's result, in Watts); NULL where the "
               "power row is energy per query (millijoules)",
      "per_joule": "result / watts (or 1000 / millijoules per query): work per joule",
      "per_joule_unit": "tokens/J, samples/J, queries/J or tasks/J",
      "joules_per_unit": "watts / result: joules per token, sample or query",
      "power_result_id": "mlperf_result.id of the power row",
      "basis": "Evidence basis; always derived: measured"},
     inherits=("mlperf_result",), weakest=(Evidence.measured,))(
"""
SELECT p.id AS id, """ + keys("p") + """,
       p.availability,
       CASE WHEN w.units = """ + WATTS + """ THEN w.result END AS watts,
       CASE WHEN w.units = """ + WATTS + """ THEN p.result / w.result
            ELSE 1000.0 / w.result END AS per_joule,
       CASE WHEN w.units = """ + WATTS + """ THEN lower(split_part(p.units, '/', 1)) || '/J'
            ELSE 'queries/J' END AS per_joule_unit,
       CASE WHEN w.units = """ + WATTS + """ THEN w.result / p.result
            ELSE w.result / 1000.0 END AS joules_per_unit,
       p.id AS result_id, w.id AS power_result_id,
       """ + _lit(basis(Evidence.measured)) + """ AS basis, """ + MEASURED + """ AS weakest_input,
       """ + cited("p") + """
FROM mlperf_result p
JOIN mlperf_result w
  ON w.round = p.round AND w.division = p.division AND w.organization = p.organization
 AND w.platform = p.platform AND w.model_id = p.model_id AND w.scenario = p.scenario
 AND w.is_power AND w.result > 0
WHERE NOT p.is_power
  AND ((w.units = """ + WATTS + """ AND p.units IN """ + sql_list(THROUGHPUT_UNITS) + """)
       OR (w.units = """ + MILLIJOULES + """ AND p.units IN """ + sql_list(LATENCY_UNITS) + """))
""")


def round_order(column: str) -> str:
    """SQL that orders MLPerf rounds by version number (v4.1 < v5.0 < v10.0)."""
    return (f"list_transform(string_split(ltrim({column}, 'v'), '.'), "
            "lambda x: TRY_CAST(x AS INTEGER))")


def trend_sql(where: str) -> str:
    """The trend across rounds of the results ``where`` selects (a condition on
    ``result_per_accelerator``): per accelerator, model family, scenario and units, the best
    per-accelerator result of each round (over every row mapped to the accelerator, whatever
    its spelling's decorations), the system behind it, the change against the previous round
    that has one, and that best result per TB/s of memory bandwidth and per kW of nameplate
    power where the catalogue has them."""
    return """
WITH picked AS (
    SELECT * FROM result_per_accelerator WHERE accelerator_id IS NOT NULL AND (""" + where + """)
), best AS (
    SELECT accelerator_id, model_family, scenario, units, round,
           arg_max(id, per_accelerator) AS result_id, max(per_accelerator) AS per_accelerator,
           arg_max(per_accelerator_per_tbs, per_accelerator) AS per_accelerator_per_tbs,
           arg_max(per_accelerator_per_nameplate_kw, per_accelerator)
               AS per_accelerator_per_nameplate_kw,
           arg_max(basis, per_accelerator) AS basis,
           arg_max(weakest_input, per_accelerator) AS weakest_input,
           count(*) AS results,
           count(DISTINCT accelerator_model_name) AS spellings
    FROM picked GROUP BY ALL
)
SELECT b.accelerator_id || ':' || b.model_family || ':' || b.scenario || ':' || b.units || ':'
           || b.round AS id,
       b.accelerator_id, b.model_family, b.scenario, b.units, b.round, b.per_accelerator,
       b.results, """ + keys("r", SYSTEM_KEYS, but=("round", "model_family")) + """,
       r.availability, r.framework, r.result, r.total_accelerators,
       lag(b.round) OVER w AS previous_round,
       lag(b.per_accelerator) OVER w AS previous_per_accelerator,
       b.per_accelerator / lag(b.per_accelerator) OVER w - 1 AS change_vs_previous,
       b.per_accelerator_per_tbs, b.per_accelerator_per_nameplate_kw, b.spellings,
       r.accelerator_model_name,
       b.result_id, b.basis, b.weakest_input, """ + cited("r") + """
FROM best b JOIN mlperf_result r ON r.id = b.result_id
WINDOW w AS (PARTITION BY b.accelerator_id, b.model_family, b.scenario, b.units
             ORDER BY """ + round_order("b.round") + """)
"""


view("accelerator_trend",
     "Trends across rounds for what a buyer can get (closed division, available systems): per "
     "accelerator, model family, scenario and units, the best per-accelerator result of each "
     "round, the system behind it, and the change against the previous round that has one "
     "(how much the same chip gained, mostly from software). /v1/trends computes the same for "
     "any division, availability and model id.",
     {"per_accelerator": "Best result / total_accelerators in the round",
      "results": "Results of the accelerator, family, scenario and units in the round",
      "previous_round": "The previous round with a result for the same accelerator, family, "
                        "scenario and units",
      "previous_per_accelerator": "Its best per-accelerator result",
      "change_vs_previous": "per_accelerator / previous_per_accelerator - 1",
      "per_accelerator_per_tbs": "The best result's per_accelerator / the accelerator's datasheet "
                                 "memory bandwidth in TB/s (vendor_spec; NULL when none)",
      "per_accelerator_per_nameplate_kw": "The best result's per_accelerator / the accelerator's "
                                          "datasheet nameplate power in kW (TDP/TBP, not "
                                          "MLPerf's measured power; NULL when none)",
      "spellings": "Distinct accelerator names (with their decorations) among the round's "
                   "results of the accelerator",
      "id": "accelerator_id:model_family:scenario:units:round",
      "result_id": "mlperf_result.id of the best result", **citation_of("the best result")},
     inherits=("mlperf_result", "result_per_accelerator"),
     weakest=(Evidence.measured, Evidence.vendor_spec))(
    trend_sql("division = 'closed' AND availability = 'available'"))


view("round_rule",
     "The latency limits each MLPerf round is compared with: the rules document pinned to the "
     "round in sources.toml, else the latest rules document fetched.",
     {"rule_basis": "pinned (the round's pinned rules document) or latest (no pin: the latest "
                    "document fetched)",
      "scenario": "Scenario the limits apply to: Server or Interactive.",
      "round": "MLPerf round (every round mlperf_result holds)"},
     inherits=("benchmark_rule",))(
"""
WITH docs AS (
    SELECT id, sha256, fetched_at FROM source_snapshot WHERE kind = 'rules_document'
), latest AS (
    SELECT id FROM docs ORDER BY fetched_at DESC LIMIT 1
), rounds AS (
    SELECT DISTINCT round FROM mlperf_result
)
SELECT r.round, CASE WHEN p.sha256 IS NULL THEN 'latest' ELSE 'pinned' END AS rule_basis, b.*
FROM rounds r
LEFT JOIN rule_pin p ON p.round = r.round
JOIN docs d ON (p.sha256 IS NOT NULL AND d.sha256 = p.sha256)
            OR (p.sha256 IS NULL AND d.id = (SELECT id FROM latest))
JOIN benchmark_rule b ON b.source_snapshot_id = d.id
""")

view("latency_bound",
     "Bounds from the MLPerf latency limits for each Server/Interactive Tokens/s result: the "
     "minimum per-user speed (1/TPOT), the most concurrent streams the throughput can be serving "
     "(throughput x TPOT) and the end-to-end time of a reference-length answer "
     "(TTFT + (n-1) x TPOT).",
     {"scenario": "Server or Interactive (the scenarios with latency limits)",
      "min_tokens_per_s_per_user": "1000 / tpot_ms",
      "max_concurrent_streams": "result x tpot_ms / 1000",
      "reference_answer_seconds": "(ttft_ms + (round(reference_tokens) - 1) x tpot_ms) / 1000: "
                                  "an answer of the reference length in whole tokens (the "
                                  "rules' mean, e.g. 294.45, rounded), its first token at TTFT "
                                  "and each other one TPOT later",
      "basis": "Evidence basis; always derived: measured + benchmark_rule"},
     inherits=("mlperf_result", "round_rule"), weakest=(Evidence.measured,))(
"""
SELECT r.id, """ + keys("r") + """,
       r.availability, b.ttft_ms, b.tpot_ms, b.reference_tokens, b.rule_basis,
       1000.0 / b.tpot_ms AS min_tokens_per_s_per_user,
       r.result * b.tpot_ms / 1000.0 AS max_concurrent_streams,
       (b.ttft_ms + (round(b.reference_tokens) - 1) * b.tpot_ms) / 1000.0 AS reference_answer_seconds,
       r.id AS result_id, b.id AS rule_id,
       """ + _lit(basis(Evidence.measured, Evidence.benchmark_rule)) + """ AS basis,
       """ + MEASURED + """ AS weakest_input, """ + cited("r") + """
FROM mlperf_result r
JOIN round_rule b ON b.round = r.round AND b.model_family = r.model_family
                AND b.scenario = r.scenario
WHERE NOT r.is_power AND r.units = """ + TOKENS + """
""")

# price_catalog holds two sources under Azure's column names, so each column says what it
# holds for each (the Azure API's meaning, then the SkyPilot catalog rows' value).
_CATALOG_AS = {
    "id": "cloud_price.id", "price_key": "cloud_price.price_key",
    "arm_sku_name": "the instance type", "arm_region_name": "the region as the catalog writes it",
    "price_type": "Consumption", "tier_minimum_units": "0", "currency": "USD",
    "retail_price": "the published price (GCP host + GPU: their sum)",
    "unit_price": "the published price", "unit_of_measure": HOURLY_UNITS[0],
    "hourly_price": "the price per hour, NULL when refused as a sentinel", "os": "linux",
    "offer": "on_demand or spot", "effective_start": "when first observed",
    "valid_from": "when first observed (a backfill: the commit's date)",
    "valid_to": "when replaced (NULL: current)", "first_seen_at": "the first fetch that saw it",
    "last_seen_at": "the latest fetch that saw it", "listed": "false once gone from the file",
    "source_snapshot_id": "the CSV it was read from"}


def _catalog_as(column: str) -> str | None:
    """What a SkyPilot catalog row holds in an azure_price column of price_catalog (evidence:
    list_price in both, said once)."""
    return None if column == "evidence" else f"SkyPilot catalog rows: {_CATALOG_AS.get(column, 'NULL')}."


view("price_catalog",
     "Every price version of every provider with the accelerator it rents (NULL when unmapped) "
     "and the price per accelerator-hour: Azure's own API (azure_price, every column) and each "
     "cloud of the SkyPilot catalog (cloud_price, under Azure's column names: instance type as "
     "arm_sku_name, region as arm_region_name; Azure-only columns NULL).",
     {"price_per_accelerator_hour": "hourly_price / accelerators per VM (NULL when unmapped)",
      "accelerator_id": "Accelerator the VM size rents (azure: accelerator_alias of kind "
                        "azure_sku; the catalog: data/cloud_accelerators.yaml); NULL when "
                        "unmapped",
      "provider": "azure for the Azure API's prices, else the catalog's cloud name",
      "price_source": "azure_prices (the Azure Retail Prices API) or cloud_prices (the "
                      "SkyPilot catalog)",
      "zone": "Availability zone, where the catalog gives one"},
     inherits=("azure_price",), passed_note=_catalog_as)(
"""
SELECT p.*, 'azure' AS provider, 'azure_prices' AS price_source, NULL::VARCHAR AS zone,
       a.accelerator_id, a.count AS accelerators,
       p.hourly_price / a.count AS price_per_accelerator_hour
FROM azure_price p
LEFT JOIN accelerator_alias a ON a.kind = 'azure_sku' AND a.alias = p.arm_sku_name
UNION ALL BY NAME
SELECT c.id, c.price_key, c.instance_type AS arm_sku_name, c.region AS arm_region_name,
       'Consumption' AS price_type, 0.0 AS tier_minimum_units, 'USD' AS currency,
       c.published_price AS retail_price, c.published_price AS unit_price,
       """ + _lit(HOURLY_UNITS[0]) + """ AS unit_of_measure, c.hourly_price, 'linux' AS os, c.offer,
       c.valid_from AS effective_start, c.valid_from, c.valid_to, c.first_seen_at,
       c.last_seen_at, c.listed, c.evidence, c.source_snapshot_id, c.cloud AS provider,
       'cloud_prices' AS price_source, c.zone, c.accelerator_id, c.accelerators,
       CASE WHEN c.accelerator_match = 'mapped' THEN c.hourly_price / c.accelerators
       END AS price_per_accelerator_hour
FROM cloud_price c
""")

view("accelerator_hour_price",
     "Azure VM prices per accelerator-hour: hourly VM price / accelerators per VM, per SKU, "
     "region, offer and OS, each version with its validity window (mapped SKUs only).",
     {"price_per_accelerator_hour": "hourly_price / accelerators per VM",
      "basis": "Evidence basis; always derived: list_price"},
     inherits=("price_catalog",), weakest=(Evidence.list_price,))(
"""
SELECT id AS price_id, arm_sku_name, arm_region_name, price_type, offer, os,
       reservation_term, currency, hourly_price, accelerator_id, accelerators,
       price_per_accelerator_hour, valid_from, valid_to, listed, effective_start,
       source_snapshot_id, """ + _lit(basis(Evidence.list_price)) + """ AS basis,
       """ + LIST_PRICE + """ AS weakest_input
FROM price_catalog
WHERE accelerators > 0 AND hourly_price IS NOT NULL AND price_source = 'azure_prices'
""")

view("provider_price",
     "Every provider's GPU prices per accelerator-hour, one row per price version: Azure's own "
     "API (Linux, pay as you go, spot and low priority) and every cloud of the SkyPilot catalog "
     "(cloud_price, mapped and priced rows only), side by side under one provider name.",
     {"provider": "Cloud: azure for the Azure API's prices, else the catalog's cloud name "
                  "(aws, azure, gcp, lambda, runpod, vast...)",
      "price_source": "azure_prices (the Azure Retail Prices API) or cloud_prices (the "
                      "SkyPilot catalog)",
      "instance_type": "VM size or instance type whose price this is",
      "region": "Region as the provider writes it",
      "zone": "Availability zone, where the catalog gives one",
      "offer": f"Offer: {OFFERS_SAID}",
      "price_per_accelerator_hour": "hourly_price / accelerators per instance",
      "price_id": "azure_price.id or cloud_price.id of the price version",
      "hourly_price": "USD per instance-hour (Azure's hourly price, or the catalog's)",
      "accelerators": "Accelerators one instance rents (Azure: accelerator_alias; the catalog: "
                      "data/cloud_accelerators.yaml or its own count)",
      "accelerator_id": "Accelerator the instance rents",
      "valid_from": "Since when this price version holds",
      "valid_to": "When a newer version replaced it (NULL: current)",
      "source_snapshot_id": "source_snapshot.id of the page or CSV the price was read from",
      "basis": "Evidence basis; always derived: list_price"},
     inherits=("accelerator_hour_price", "cloud_price"), weakest=(Evidence.list_price,))(
"""
SELECT price_id, 'azure' AS provider, 'azure_prices' AS price_source,
       arm_sku_name AS instance_type, arm_region_name AS region, NULL::VARCHAR AS zone, offer,
       accelerator_id, accelerators, hourly_price, price_per_accelerator_hour, valid_from,
       valid_to, source_snapshot_id, basis, weakest_input
FROM accelerator_hour_price
WHERE os = 'linux' AND price_type = 'Consumption'
UNION ALL
SELECT c.id, c.cloud, 'cloud_prices', c.instance_type, c.region, c.zone, c.offer,
       c.accelerator_id, c.accelerators, c.hourly_price, c.hourly_price / c.accelerators,
       c.valid_from, c.valid_to, c.source_snapshot_id,
       """ + _lit(basis(Evidence.list_price)) + """, """ + LIST_PRICE + """
FROM cloud_price c
WHERE c.accelerator_match = 'mapped' AND c.hourly_price IS NOT NULL AND c.accelerators > 0
""")

view("cost_input",
     "The inputs of every cost figure: each Tokens/s result of a system with accelerators, "
     "with its premium over the same system's Offline throughput (Offline / this result, from "
     "scenario_ratio; NULL for Offline rows and unpaired results).",
     {"premium_vs_offline": "Offline result / this result (= this cost / the Offline cost); "
                            "NULL for Offline rows and results with no Offline pair"},
     inherits=("mlperf_result",))(
"""
SELECT r.id, """ + keys("r") + """,
       r.availability, 1.0 / pr.ratio AS premium_vs_offline, """ + cited("r") + """
FROM mlperf_result r
LEFT JOIN scenario_ratio pr ON pr.other_result_id = r.id AND NOT pr.flagged
WHERE NOT r.is_power AND r.units = """ + TOKENS + """ AND """ + COUNTED + """
""")

def result_cost(rate: str) -> str:
    """Cost per million tokens of a result of cost_input (aliased r) at ``rate`` per
    accelerator-hour: the one formula (``calculators.cost_per_million_sql``), every
    accelerator of the system charged."""
    return cost_per_million_sql(rate, "r.result", "r.total_accelerators")
COST_RESULT_COLUMNS = ("r.id AS result_id, " + keys("r") + ", r.availability, r.premium_vs_offline, "
                       + carried("r"))


view("cost_assumed_rate",
     "Cost per million tokens for every Tokens/s result at assumed $5, $10 and $15 per "
     "accelerator-hour: rate x accelerators / (tokens/s x 3600) x 1e6.",
     {"rate_per_accelerator_hour": "Assumed USD per accelerator-hour (evidence: assumption)",
      "cost_per_million_tokens": "rate x total_accelerators / (result x 3600) x 1e6",
      "id": "result_id:rate",
      "price_basis": "Always assumed here",
      "basis": "Evidence basis; always derived: measured + assumption"},
     inherits=("cost_input",), weakest=(Evidence.assumption,))(
"""
SELECT r.id || ':' || CAST(rate AS VARCHAR) AS id, r.id AS result_id, """ + keys("r") + """,
       r.availability, """ + carried("r") + """,
       rate AS rate_per_accelerator_hour,
       """ + result_cost("rate") + """ AS cost_per_million_tokens,
       'assumed' AS price_basis, """ + _lit(basis(Evidence.measured, Evidence.assumption)) + """ AS basis,
       """ + ASSUMPTION + """ AS weakest_input
FROM cost_input r, (VALUES """ + ", ".join(f"({r}::DOUBLE)" for r in ASSUMED_RATES) + """) AS rates(rate)
""")

# What a cost row of an observation adds to an MLPerf result's (NULL on MLPerf's rows).
OBSERVED_COST_COLUMNS = (("conc", "INTEGER"), ("isl", "INTEGER"), ("osl", "INTEGER"),
                         ("interactivity", "DOUBLE"), ("observed_on", "DATE"),
                         ("run_url", "VARCHAR"), ("file_name", "VARCHAR"))
# A priced row's input columns when its inputs are of any evidence (``frontier.cost_input_sql``)
PRICED_RESULT_COLUMNS = (COST_RESULT_COLUMNS + ", r.evidence, "
                         + ", ".join(f"r.{c}" for c, _ in OBSERVED_COST_COLUMNS))
# The evidence /v1/costs can price: MLPerf results, InferenceX observations, imported runs.
PRICED_EVIDENCE = (Evidence.measured, Evidence.third_party_measured, Evidence.self_measured)


@cache  # a few labels, asked on every cost request
def evidence_basis(alias: str, price: Evidence) -> str:
    """The basis of a cost row whose input ``alias`` says its evidence, priced on ``price``."""
    return "CASE " + " ".join(
        f"WHEN {alias}.evidence = '{kind.value}' THEN {_lit(basis(kind, price))}"
        for kind in PRICED_EVIDENCE) + " END"


def list_price_cost_sql(price_where: str, *, ask: str | None = None,
                        inputs: str | None = None) -> str:
    """Cost per million tokens of Tokens/s results at the cheapest Azure price per
    accelerator-hour of their accelerator, per region, offer, OS and reservation term, among the
    price versions ``price_where`` selects. Without ``ask``, only priced rows (every region,
    offer and OS). With ``ask`` (SQL of one row: region, offer, os), every result, 'no price'
    with a NULL cost where its accelerator has no price there. Bound parameters, in order:
    ``ask``'s, ``price_where``'s, then ``inputs``' (SQL of the rows to price, with their
    evidence and observation columns: ``frontier.cost_input_sql``; default MLPerf's)."""
    columns, row_basis = COST_RESULT_COLUMNS, _lit(basis(Evidence.measured, Evidence.list_price))
    if inputs is not None:
        columns = PRICED_RESULT_COLUMNS
        row_basis = evidence_basis("r", Evidence.list_price)
    if ask is None:
        region, offer, os_, join, asked, first = "p.region", "p.offer", "p.os", "JOIN", "", ""
    else:
        region, offer, os_, join, asked = ("ask.region", "ask.offer", "ask.os", "LEFT JOIN",
                                           "CROSS JOIN ask")
        first = f"ask AS ({ask}),"
        price_where = ("lower(arm_region_name) = (SELECT region FROM ask) AND offer = "
                       f"(SELECT offer FROM ask) AND os = (SELECT os FROM ask) AND {price_where}")
    return f"""
WITH {first} p AS (
    SELECT accelerator_id, arm_region_name AS region, offer, os, reservation_term,
           min(price_per_accelerator_hour) AS rate,
           arg_min(arm_sku_name, price_per_accelerator_hour) AS sku,
           arg_min(price_id, price_per_accelerator_hour) AS price_id,
           arg_min(valid_from, price_per_accelerator_hour) AS price_valid_from
    FROM accelerator_hour_price WHERE {price_where}
    GROUP BY accelerator_id, arm_region_name, offer, os, reservation_term)
SELECT r.id || ':list_price:' || {region} || ':' || {offer} || ':' || {os_}
           || coalesce(':' || p.reservation_term, '') AS id,
       {columns},
       'list_price' AS price_basis, 'azure' AS provider, {region} AS region, {offer} AS offer,
       {os_} AS os, p.reservation_term, p.sku, p.price_id, p.price_valid_from,
       p.rate AS rate_per_accelerator_hour,
       CASE WHEN p.rate IS NULL THEN 'no price' ELSE 'priced' END AS price_status,
       {result_cost("p.rate")} AS cost_per_million_tokens,
       {row_basis} AS basis,
       {LIST_PRICE} AS weakest_input
FROM {inputs or "cost_input"} r {asked} {join} p ON p.accelerator_id = r.accelerator_id"""


def provider_cost_sql(price_where: str, *, every: bool, inputs: str) -> str:
    """Cost per million tokens of the rows ``inputs`` selects (``frontier.cost_input_sql``) on
    each provider that rents their accelerator: per provider, its cheapest price
    per accelerator-hour for the offer (any region) among the versions ``price_where`` selects
    (over ``provider_price``); with ``every``, also the cheapest provider's and the median of
    the providers' rates ('no price' with a NULL cost where no provider rents it). Bound
    parameters, in order: the offer, ``price_where``'s, the providers (a list; empty: all),
    then ``inputs``'."""
    columns = PRICED_RESULT_COLUMNS
    summary = """
    UNION ALL (SELECT accelerator_id, 'cheapest', rate, sku, region, price_id, price_valid_from
    FROM p QUALIFY row_number() OVER (PARTITION BY accelerator_id ORDER BY rate, provider) = 1)
    UNION ALL SELECT accelerator_id, 'median', median(rate), NULL, NULL, NULL, NULL
    FROM p GROUP BY 1""" if every else ""
    return f"""
WITH ask AS (SELECT ?::VARCHAR AS offer),
p AS (  -- each provider's cheapest price version (ties: by instance type, region, id)
    SELECT accelerator_id, provider, price_per_accelerator_hour AS rate, instance_type AS sku,
           region, price_id, valid_from AS price_valid_from
    FROM provider_price WHERE offer = (SELECT offer FROM ask) AND {price_where}
    QUALIFY row_number() OVER (PARTITION BY accelerator_id, provider ORDER BY
                               price_per_accelerator_hour, instance_type, region, price_id) = 1),
chosen AS (SELECT * FROM p WHERE len(?::VARCHAR[]) = 0 OR list_contains(?::VARCHAR[], provider)
           {summary}),
priced AS (
    SELECT r.*, c.provider, c.rate, c.sku, c.region, c.price_id, c.price_valid_from
    FROM {inputs} r JOIN chosen c ON c.accelerator_id = r.accelerator_id
    {"UNION ALL BY NAME SELECT r.*, 'cheapest' AS provider FROM " + inputs + " r WHERE "
     "r.accelerator_id IS NULL OR r.accelerator_id NOT IN (SELECT accelerator_id FROM p)"
     if every else ""})
SELECT r.id || ':list_price:' || r.provider || ':' || (SELECT offer FROM ask) AS id,
       {columns}, 'list_price' AS price_basis, r.provider, r.region,
       (SELECT offer FROM ask) AS offer, 'linux' AS os, NULL::VARCHAR AS reservation_term,
       r.sku, r.price_id, r.price_valid_from, r.rate AS rate_per_accelerator_hour,
       CASE WHEN r.rate IS NULL THEN 'no price' ELSE 'priced' END AS price_status,
       {result_cost("r.rate")} AS cost_per_million_tokens,
       {evidence_basis("r", Evidence.list_price)} AS basis
FROM priced r"""


view("list_price_cost",
     "Cost per million tokens of every Tokens/s result whose accelerator Azure rents, at the "
     "current cheapest Azure list price per accelerator-hour of that accelerator, one row per "
     f"region, offer ({', '.join(OFFERS)}), OS and reservation "
     "term: rate x total_accelerators / (tokens/s x 3600) x 1e6. The same rows /v1/costs "
     "serves on the list_price basis for one region/offer/OS (which also lists the results "
     "with no price there).",
     {"rate_per_accelerator_hour": "Cheapest current Azure price per accelerator-hour of the "
                                   "accelerator in this region/offer/OS/term (USD)",
      "cost_per_million_tokens": "rate x total_accelerators / (result x 3600) x 1e6",
      "premium_vs_offline": "This cost / the same system's Offline cost (= Offline throughput "
                            "/ this throughput); NULL for Offline rows",
      "price_basis": "Always list_price here",
      "provider": "Always azure here (the Azure API's prices; /v1/costs?provider= prices "
                  "every provider)",
      "region": "Azure region of the price (arm_region_name)",
      "sku": "The VM size (arm_sku_name) whose price is the cheapest",
      "price_valid_from": "Since when that price version holds",
      "price_status": "Always priced here (no-price results are only in /v1/costs)",
      "id": "result_id:list_price:region:offer:os[:reservation_term]",
      "offer": f"Offer of the price: {OFFERS_SAID}",
      "os": "Operating system of the price: linux or windows",
      "reservation_term": "Term of a reservation price (1 Year, 3 Years); NULL for others",
      "price_id": "azure_price.id of the cheapest price version used",
      "basis": "Evidence basis; always derived: measured + list_price"},
     inherits=("cost_input", "accelerator_hour_price"), weakest=(Evidence.list_price,))(
    list_price_cost_sql("valid_to IS NULL"))

view("hardware_catalog",
     "Hardware specs with the name, vendor and kind of the hardware they describe.",
     inherits=("hardware_spec", "hardware"))(
"""
SELECT s.*, h.name AS hardware_name, h.vendor, h.kind, h.accelerator_id, h.accelerator_count
FROM hardware_spec s JOIN hardware h ON h.id = s.hardware_id
""")

def claim_check_sql(results_where: str = "TRUE") -> str:
    """Each claim against each MLPerf round (``claim_check``), the measured counterpart chosen
    among the results ``results_where`` keeps (SQL over mlperf_result; its ``?`` are bound by
    the caller), e.g. a division and availability."""
    return """WITH rounds AS (SELECT DISTINCT round FROM mlperf_result),
measured AS (
    SELECT round, accelerator_id, model_family, count(*) AS results,
           arg_max(id, result) AS best_result_id, max(result) AS best_result,
           arg_max(scenario, result) AS best_scenario
    FROM mlperf_result
    WHERE NOT is_power AND units = """ + TOKENS + """ AND scenario IN """ + LATENCY + """
          AND (""" + results_where + """)
    GROUP BY ALL
),
presence AS (
    SELECT c.id AS claim_id, ro.round,
           EXISTS (SELECT 1 FROM mlperf_result r WHERE r.round = ro.round
                   AND (lower(r.organization) = lower(c.vendor)
                        OR (c.accelerator_id IS NOT NULL AND r.accelerator_id = c.accelerator_id)))
               AS in_round
    FROM claim c CROSS JOIN rounds ro
)
SELECT c.id || ':' || pr.round AS id, c.id AS claim_id, pr.round, c.vendor, c.product, c.model,
       c.accelerator_id, c.metric, c.value AS claim_value, c.unit, c.evidence,
       c.claimed_on, c.checked_on,
       pr.in_round AS vendor_or_accelerator_in_round,
       m.best_result_id AS closest_result_id, m.best_result AS closest_result,
       m.best_scenario AS closest_scenario, m.results AS comparable_results,
       num.value / den.value AS recomputed_value,
       c.value / (num.value / den.value) AS claim_over_recomputed,
       CASE WHEN m.best_result_id IS NOT NULL
                THEN 'measured counterpart in ' || pr.round || ': best Server/Interactive Tokens/s '
                     || 'result for the same accelerator and model (aggregate, not per user)'
            WHEN NOT pr.in_round THEN 'no MLPerf submission in round ' || pr.round
            ELSE 'no comparable MLPerf result (same accelerator and model) in round ' || pr.round
       END AS verdict,
       CASE WHEN num.value IS NOT NULL
            THEN """ + _lit(basis(Evidence.vendor_spec) + " + ") + """ || c.evidence
            ELSE """ + _lit(basis(Evidence.vendor_spec).split(":")[0] + ": ") + """ || c.evidence END AS basis,
       c.evidence AS weakest_input, """ + NOTICE + """
FROM claim c
JOIN presence pr ON pr.claim_id = c.id
LEFT JOIN measured m ON m.round = pr.round AND m.accelerator_id = c.accelerator_id
                    AND m.model_family = coalesce(c.model_family, c.model)
LEFT JOIN hardware_spec num ON num.id = c.recompute_numerator
LEFT JOIN hardware_spec den ON den.id = c.recompute_denominator
"""


view("claim_check",
     "Each claim next to what the warehouse can say about it, per MLPerf round: the best "
     "measured Server/Interactive Tokens/s result for the same accelerator and model, whether "
     "the vendor or accelerator appears in the round at all, and the figure recomputed from "
     "specs where the claim is a ratio of specs.",
     {"verdict": "What the measured data says, in words",
      "recomputed_value": "numerator spec / denominator spec (claims with a recompute rule)",
      "claim_over_recomputed": "claim value / recomputed value",
      "id": "claim_id:round",
      "round": "MLPerf round the claim is checked against (every round mlperf_result holds)",
      "unit": "Unit of the claim's value",
      "closest_scenario": "That result's scenario: Server or Interactive",
      "basis": "derived: <the claim's evidence label>, or derived: vendor_spec + <that label> "
               "where the claim is recomputed from specs"},
     inherits=("claim",), weakest=CLAIM_LABELS)(
    claim_check_sql())

view("observation",
     "InferenceX observations (third_party_measured, SemiAnalysis InferenceX), every version "
     "(valid_from/valid_to), with the accelerator and model ids their keys map to "
     "(data/inferencex.yaml), every GPU of the configuration counted and the throughputs "
     "divided by it, and the publisher's invariants checked (warehouse/figures/reconcile.py). Only the "
     "mapping and the counting are computed here, so a corrected alias or rule relabels "
     "history.",
     {"accelerator_id": "Accelerator id the hardware key maps to; NULL when unmapped or with no "
                        "counterpart (see hardware_mapping)",
      "model_id": "Warehouse model id (the MLPerf model family) the raw model key maps to; NULL "
                  "when the warehouse has no counterpart",
      "hardware_mapping": "mapped, no_counterpart (listed with id null) or unmapped (not listed)",
      "model_mapping": "mapped, no_counterpart or unmapped",
      "prefill_gpus": "Prefill GPUs of a disaggregated configuration (NULL when aggregated)",
      "decode_gpus": "Decode GPUs of a disaggregated configuration (NULL when aggregated)",
      "gpus": "Every GPU the configuration occupies (gpu_count_basis says how it was counted)",
      "gpu_count_basis": "How gpus was counted: " + "; ".join(reconcile.COUNT_BASES.values()),
      "input_tput_per_gpu": "Input tokens/s divided by every GPU of the configuration",
      "output_tput_per_gpu": "Output tokens/s divided by every GPU of the configuration: the "
                             "frontier's y axis (MLPerf's Tokens/s counts output tokens too)",
      "physical_ratio": "concurrency x median interactivity / (output tokens/s per GPU x gpus): "
                        "about 1 when the count is right (Little's law)",
      "invariant_failures": "The publisher's invariants the row breaks, named ('; '-separated); "
                            "NULL when it breaks none. Such a row is never on the frontier",
      "reconciled": "True when the row breaks none of the publisher's invariants",
      "current": "True for the version a refresh last fetched that its publisher still lists "
                 "(valid_to and withdrawn_at NULL): only current rows are drawn, priced or "
                 "compared",
      "evidence": label_comment((Evidence.third_party_measured, Evidence.self_measured)),
      "source": "inferencex (SemiAnalysis InferenceX, third_party_measured) or self_measured "
                "(a run the user imported with perfledger import, on the hardware they stated)"},
     inherits=("inferencex_observation", "self_observation"))(
"""
WITH counted AS (""" + reconcile.observation_sql("inferencex_observation") + """)
SELECT o.*, 'inferencex' AS source, o.invariant_failures IS NULL AS reconciled,
       o.valid_to IS NULL AND o.withdrawn_at IS NULL AS current,
       h.target_id AS accelerator_id, m.target_id AS model_id,
       CASE WHEN h.id IS NULL THEN 'unmapped' WHEN h.target_id IS NULL THEN 'no_counterpart'
            ELSE 'mapped' END AS hardware_mapping,
       CASE WHEN m.id IS NULL THEN 'unmapped' WHEN m.target_id IS NULL THEN 'no_counterpart'
            ELSE 'mapped' END AS model_mapping
FROM counted o
LEFT JOIN inferencex_alias h ON h.kind = 'hardware' AND h.key = o.hardware_base
LEFT JOIN inferencex_alias m ON m.kind = 'model' AND m.key = o.model
UNION ALL BY NAME""" + selfmeasured.observation_sql())

# What makes one configuration of an observation (one frontier curve; a claim's like with
# like): its latest run is the current one. A self-measured import (import_id) is one sweep:
# the frontier keeps every run of it.
CONFIG = ("model, hardware, framework, precision, spec_method, disagg, is_multinode, prefill_tp, "
          "prefill_ep, prefill_dp_attention, prefill_num_workers, decode_tp, decode_ep, "
          "decode_dp_attention, decode_num_workers, num_prefill_gpu, num_decode_gpu, pp, "
          "offload_mode, benchmark_type, import_id")

view("claim_observation_check",
     "Each per-user speed claim on a model InferenceX measures (one data/inferencex.yaml "
     "maps), next to the nearest comparable "
     "InferenceX observation: same model, the claim's accelerator where it names one, and "
     "interactivity at or above the claimed tokens/s per user (the slowest such observation, "
     "the one closest to the claim); when none reaches it, the fastest observation instead.",
     {"claim_value": "The claimed output tokens/s per user",
      "observation_id": "inferencex_observation.id of the nearest observation at or above the "
                        "claim (NULL when none reaches it)",
      "observation_interactivity": "Its median output tokens/s per user",
      "observation_output_tput_per_gpu": "Its output tokens/s per GPU at that speed",
      "comparable_observations": "Observations of the same model (and accelerator, if named)",
      "fastest_observation_id": "The comparable observation with the highest interactivity",
      "fastest_interactivity": "Its interactivity",
      "reached": "True when some comparable observation is at or above the claimed speed",
      "compared_on": "What makes an observation comparable: same model, and the claim's "
                     "accelerator, precision and lengths where it states them; only current, "
                     "reconciled versions, each configuration's latest run",
      "verdict": "What InferenceX's measurements say about the claim, in words",
      "notice": "Attribution of the InferenceX data",
      "id": "claim.id of the claim checked",
      "unit": "Unit of the claim's value",
      "basis": "derived: third_party_measured + <the claim's evidence label>"},
     inherits=("claim", "observation"))(
"""
WITH c AS (
    SELECT c.*, coalesce(c.model_family, c.model) AS fam,
           lower(json_extract_string(c.conditions, '$.precision')) AS precision,
           TRY_CAST(json_extract_string(c.conditions, '$.isl') AS INTEGER) AS isl,
           TRY_CAST(json_extract_string(c.conditions, '$.osl') AS INTEGER) AS osl
    FROM claim c
    WHERE c.metric IN """ + sql_list(PER_USER_SPEED_METRICS) + """
      AND coalesce(c.model_family, c.model) IN (
          SELECT target_id FROM inferencex_alias WHERE kind = 'model' AND target_id IS NOT NULL
          UNION SELECT key FROM inferencex_alias WHERE kind = 'model')
),
latest AS (  -- like with like: current, reconciled versions, each configuration's latest run
    SELECT * FROM observation WHERE current AND reconciled AND interactivity IS NOT NULL
      AND source = 'inferencex'
    QUALIFY observed_on = max(observed_on) OVER (PARTITION BY """ + CONFIG + """, isl, osl)
),
cand AS (
    SELECT c.id AS claim_id, c.value AS claim_value, o.id AS obs_id, o.interactivity
    FROM c JOIN latest o ON (o.model_id = c.fam OR o.model = c.fam)
       AND (c.accelerator_id IS NULL OR o.accelerator_id = c.accelerator_id)
       AND (c.precision IS NULL OR lower(o.precision) = c.precision)
       AND (c.isl IS NULL OR o.isl = c.isl) AND (c.osl IS NULL OR o.osl = c.osl)
),
near AS (
    SELECT claim_id, count(*) AS comparable,
           arg_min(obs_id, interactivity) FILTER (WHERE interactivity >= claim_value) AS obs_id,
           arg_max(obs_id, interactivity) AS fastest_id, max(interactivity) AS fastest
    FROM cand GROUP BY claim_id
)
SELECT c.id, c.id AS claim_id, c.vendor, c.product, c.model, c.accelerator_id, c.metric,
       c.value AS claim_value, c.unit, c.evidence, c.claimed_on, c.checked_on,
       o.id AS observation_id, o.interactivity AS observation_interactivity,
       o.output_tput_per_gpu AS observation_output_tput_per_gpu, o.hardware, o.framework,
       o.precision, o.isl, o.osl, o.conc, o.observed_on, o.run_url,
       coalesce(n.comparable, 0) AS comparable_observations,
       n.fastest_id AS fastest_observation_id, n.fastest AS fastest_interactivity,
       o.id IS NOT NULL AS reached,
       'same model' || coalesce(', accelerator ' || c.accelerator_id, '')
           || coalesce(', precision ' || c.precision, '')
           || coalesce(', lengths ' || c.isl || '/' || c.osl, '')
           || '; current, reconciled observations, each configuration''s latest run'
           AS compared_on,
       CASE WHEN n.claim_id IS NULL
                THEN 'no InferenceX observation of ' || c.fam
                     || coalesce(' on ' || c.accelerator_id, '')
            WHEN o.id IS NOT NULL
                THEN 'InferenceX measured ' || round(o.interactivity, 1) || ' tokens/s per user '
                     || '(at or above the claimed ' || c.value || ') on ' || o.hardware || ', '
                     || o.framework || ' ' || o.precision || ', ISL/OSL ' || o.isl || '/' || o.osl
                     || ', concurrency ' || o.conc || ', ' || o.observed_on
                     || ': ' || round(o.output_tput_per_gpu, 1) || ' output tokens/s per GPU'
            ELSE 'no InferenceX configuration reaches the claimed ' || c.value
                 || ' tokens/s per user; the fastest measured is ' || round(n.fastest, 1)
       END AS verdict,
       'derived: third_party_measured + ' || c.evidence AS basis,
       """ + _lit(INFERENCEX_ATTRIBUTION) + """ AS notice
FROM c LEFT JOIN near n ON n.claim_id = c.id
LEFT JOIN observation o ON o.id = n.obs_id
""")

LINEAGE_IDS = {"accelerator_hour_price": "price_id", "provider_price": "price_id"}  # ids named otherwise

view("derived_lineage",
     "Every derived row with the basis it reports and the weakest evidence among its inputs; "
     "validation checks that the two agree.",
     {"id": "id of the row in its view (accelerator_hour_price, provider_price: price_id)"},
     weakest=frozenset().union(*WEAKEST.values()))(
    "\nUNION ALL\n".join(  # every derived view registered above, by its row id
        f"SELECT '{name}' AS relation, {LINEAGE_IDS.get(name, 'id')} AS id, "
        f"basis AS reported_basis, weakest_input FROM {name}"
        for name in WEAKEST if name != "derived_lineage"))


# Meanings of columns that several views compute the same way.
COMMON_COLUMNS = {
    "basis": "Evidence basis the derived row reports, e.g. derived: measured + list_price.",
    "weakest_input": "The weakest evidence label among the row's inputs.",
    "id": "Stable id of the derived row (built from its inputs' ids).",
    "result_id": "mlperf_result.id of the input result.",
    "price_id": "azure_price.id of the input price version.",
    "rule_id": "benchmark_rule.id of the input latency limit.",
    "claim_id": "claim.id of the claim checked.",
    "offline_result": "The Offline result (throughput).",
    "offline_units": "Units of the Offline result.",
    "other_result": "The Server or Interactive result compared with Offline.",
    "other_units": "Units of the Server or Interactive result.",
    "offline_inferred": "Published inferred flag of the Offline row.",
    "other_inferred": "Published inferred flag of the Server/Interactive row.",
    "per_accelerator": "result / total_accelerators (aggregate throughput per accelerator).",
    "accelerators": "Accelerators per VM (curated accelerator_alias.count).",
    "hardware_name": "Display name of the hardware.",
    "claim_value": "The claim's figure.",
    "vendor_or_accelerator_in_round": "Whether the vendor or the claim's accelerator has any result in the round.",
    "closest_result_id": "mlperf_result.id of the best comparable measured result, if any.",
    "closest_result": "That result's value (Tokens/s, aggregate).",
    "closest_scenario": "That result's scenario.",
    "comparable_results": "How many results share the claim's accelerator and model in the round.",
    "relation": "The derived view the row comes from.",
    "reported_basis": "Basis the derived row reports.",
    "rate_per_accelerator_hour": "USD per accelerator-hour used for the cost.",
    "cost_per_million_tokens": "rate x total_accelerators / (tokens/s x 3600) x 1e6, in USD.",
    "price_basis": "list_price (Azure) or assumed (a chosen rate).",
    "rule_basis": "pinned (the round's pinned rules document) or latest (no pin: the latest "
                  "document fetched).",
    **{name: meaning + "." for name, meaning in citation_of("the input result").items()},
}


def column_meaning(relation: str, column: str,
                   table_meaning: Callable[[str, str], str | None]) -> str | None:
    """What ``column`` of ``relation`` holds: for a view, its own comment, else the meaning of
    the same-named column of the first relation it inherits that has one, else a meaning
    common to several views; for a table, ``table_meaning(table, column)`` (the schema's
    description). None when nothing describes it."""
    if relation not in VIEWS:
        return table_meaning(relation, column)
    own = VIEWS[relation][2]
    if column in own:
        return own[column]
    for source in INHERITS.get(relation, ()):
        found = column_meaning(source, column, table_meaning)
        if found:
            note = PASSED_NOTE[relation](column) if relation in PASSED_NOTE else None
            return f"{found} {note}" if note else found
    return COMMON_COLUMNS.get(column)


def install(con: duckdb.DuckDBPyConnection) -> None:
    """(Re)create every derived view with its comments (``column_meaning``, with the tables'
    comments as this snapshot has them)."""
    tables: dict[tuple[str, str], str] = {
        (t, c): m for t, c, m in con.execute(
            "SELECT table_name, column_name, comment FROM duckdb_columns() "
            "WHERE comment IS NOT NULL AND table_name IN (SELECT table_name FROM duckdb_tables())"
        ).fetchall()}

    def table_meaning(table: str, column: str) -> str | None:
        return tables.get((table, column))

    for name, (sql, comment, _) in VIEWS.items():
        con.execute(f"CREATE OR REPLACE VIEW {name} AS {sql}")
        con.execute(f"COMMENT ON VIEW {name} IS $${comment}$$")
        columns = [r[0] for r in con.execute(
            "SELECT column_name FROM duckdb_columns() WHERE table_name = ? "
            "ORDER BY column_index", [name]).fetchall()]
        for column in columns:
            text = column_meaning(name, column, table_meaning)
            if text:
                con.execute(f'COMMENT ON COLUMN {name}."{column}" IS $${text}$$')
