"""One builder per list resource: the filters a route takes, turned into a ``ListQuery``
(ratios, costs, trends, claims, prices, …). Filters that need SQL beyond equality and ranges
are written here, never in a route."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import date, datetime
from functools import lru_cache
from typing import Annotated, Any

from pydantic import BaseModel, Field

from warehouse.exceptions import QueryError
from warehouse.figures import derived
from warehouse.figures.frontier import EVIDENCE_SOURCE, cost_input_sql, frontier_sql
from warehouse.model.public import (
    BenchmarkRulePublic,
    ClaimCheckPublic,
    ClaimObservationPublic,
    ClaimPublic,
    CostPublic,
    EnergyPublic,
    FrontierPointPublic,
    HardwareCatalogPublic,
    LatencyBoundPublic,
    MlperfResultPublic,
    ModelShapePublic,
    ObservationPublic,
    PerAcceleratorPublic,
    PriceCatalogPublic,
    ScenarioRatioPublic,
    SourceSnapshotPublic,
    TrendPublic,
)
from warehouse.model.vocabulary import (
    ASSUMED_RATES,
    AVAILABILITY,
    DIVISIONS,
    OFFERS,
    OPERATING_SYSTEMS,
    POWER_STATUSES,
    PRICE_SOURCES,
    SCENARIOS,
    Evidence,
    model_family,
    normalise_model,
)
from warehouse.queries.items import PRICE_PLACES
from warehouse.queries.listing import (
    Accelerators,
    AnyOf,
    Caveat,
    Known,
    ListQuery,
    contains_pattern,
)


def string_schema(**keywords: object) -> Callable[[dict], None]:
    """``json_schema_extra`` that adds ``keywords`` to a parameter's string schema (each item
    of a repeatable one): constraints checked where the value is read, declared in OpenAPI.
    A repeatable parameter's closed set also takes the empty value: ``a=`` is "not given"."""

    def apply(schema: dict) -> None:
        for branch in (schema, *schema.get("anyOf", [])):
            item = branch.get("items", branch)
            if item.get("type") == "string":
                item.update(keywords)
                if "enum" in keywords and item is not branch:
                    item["enum"] = ["", *item["enum"]]

    return apply


def one_of(values: Iterable[str], description: str, default: Any = None) -> Any:
    """A parameter from a closed set, matched case-insensitively where it is read (a repeatable
    one: each value); the OpenAPI schema lists the set."""
    return Field(default, description=description,
                 json_schema_extra=string_schema(enum=list(values)))


DATE = string_schema(format="date")


class RoundScope(BaseModel):
    """Which MLPerf results a route reads or compares with: rounds, and the division and
    availability (closed and available by default, ``all`` for every system)."""

    round: list[str] | None = Field(None, description="MLPerf round, e.g. v6.1 (6.1 and V6.1 "
                                    "are the same).")
    division: list[str] | None = one_of((*DIVISIONS, "all"), "closed (default) or open; all "
                                        "for both.")
    availability: list[str] | None = one_of((*AVAILABILITY, "all"), "available (default), "
                                            "preview or rdi; all for every system.")


class ResultFilter(RoundScope):
    """Filters every route over MLPerf results shares, declared once: the API's query
    parameters are these fields (``api.params.ResultParams``, which checks them against the
    vocabulary and applies the defaults) and the builders below read them; model spellings are
    normalised here."""

    organization: list[str] | None = Field(None, description="Submitter, e.g. NVIDIA (any "
                                           "case).")
    model: list[str] | None = Field(None, description="Model id or family, e.g. deepseek-r1, "
                                    "llama2-70b (both accuracy targets) or llama2-70b-99 "
                                    "(llama3_1-8b and llama3.1-8b are the same).")
    accelerator: list[str] | None = Field(None, description=(
        "Accelerator: an id (amd-mi355x, see /v1/accelerators), a published spelling or a short "
        "name (H200, MI355X, B200); an ambiguous short name (H100) is a 422 listing the ids."))
    scenario: list[str] | None = one_of(SCENARIOS, "Offline, Server, Interactive, "
                                        "SingleStream or MultiStream (any case).")
    system: str | None = Field(None, description="Substring of the system name "
                               "(case-insensitive).")

    def _rounds(self) -> list[str]:
        return [r.strip().lower() if r.strip()[:1].lower() == "v" else "v" + r.strip()
                for r in self.round or []]  # 6.1 and V6.1 are v6.1

    def any_of(self, observed: list[str] | None = None) -> list[AnyOf]:
        """The filters as conditions. ``model`` matches a model id or a family (a family
        matches all its ids), spellings normalised. Rows of the ``observed`` evidence kinds
        (observations beside MLPerf's results, which have no round, division or
        availability) pass those three filters."""
        out: list[AnyOf] = []
        rounds = self._rounds()
        others = (("evidence", False, observed),) if observed else ()
        for column, values in (("round", rounds), ("division", self.division or []),
                               ("availability", self.availability or [])):
            if values:
                out.append(AnyOf(((column, False, values), *others)))
        if self.scenario:
            out.append(AnyOf((("scenario", False, self.scenario),)))
        if self.organization:  # as people type them: nvidia finds NVIDIA
            out.append(AnyOf((("organization", True,
                               [v.strip().lower() for v in self.organization]),)))
        if self.accelerator:  # an id, a published spelling or a short name (H200)
            out.append(AnyOf((("accelerator_id", False, Accelerators(tuple(self.accelerator))),)))
        if self.model:
            models = [normalise_model(m) for m in self.model]
            out.append(AnyOf((("model_id", False, models), ("model_family", False, models))))
        return out

    def where(self, alias: str) -> tuple[str, list]:
        """``any_of`` as one SQL condition (``true`` when there is none) and its
        parameters, for SQL that filters a relation of its own."""
        parts: list[str] = []
        params: list = []
        for condition in self.any_of():
            sql, values = condition.sql(alias)
            parts.append(sql)
            params.extend(values)
        if self.system:
            parts.append(f"{alias}.system_name ILIKE ? ESCAPE '\\'")
            params.append(contains_pattern(self.system))
        return " AND ".join(parts) or "true", params

    def known(self) -> list[Known]:
        """The values to explain when nothing matches (models, organizations, rounds and
        accelerators this snapshot's results know)."""
        out = []
        if self.model:
            out.append(Known("model", tuple(normalise_model(m) for m in self.model),
                             "SELECT model_id FROM mlperf_result UNION "
                             "SELECT model_family FROM mlperf_result ORDER BY 1"))
        if self.organization:
            out.append(Known("organization", tuple(v.strip() for v in self.organization),
                             "SELECT DISTINCT organization FROM mlperf_result ORDER BY 1"))
        if self.round:
            out.append(Known("round", tuple(self._rounds()),
                             "SELECT DISTINCT round FROM mlperf_result ORDER BY 1"))
        if self.accelerator:
            out.append(Known("accelerator", tuple(v.strip() for v in self.accelerator),
                             "SELECT DISTINCT accelerator_id FROM mlperf_result UNION "
                             "SELECT alias FROM accelerator_alias WHERE kind = 'mlperf_name' "
                             "ORDER BY 1"))
        return out

    @property
    def defaulted(self) -> bool:
        """Division and availability are the ranking routes' defaults (closed + available)."""
        return self.division == ["closed"] and self.availability == ["available"]

    def note(self) -> str | None:
        """What to say when every value is known but nothing matches."""
        if not any(getattr(self, name) for name in ResultFilter.model_fields):
            return None
        if self.defaulted:
            return ("no closed-division, available system matches (division and availability "
                    "default to closed + available here)")
        return "no row matches these filters together (each value is known in this snapshot)"

    def query(self, relation: str, public: type[BaseModel],
              observed: list[str] | None = None) -> ListQuery:
        """A list query of ``relation`` with these filters (``observed``: as ``any_of``)."""
        return ListQuery(relation=relation, public=public, any_of=self.any_of(observed),
                         contains={"system_name": self.system} if self.system else {},
                         known=self.known(), note=self.note(), defaulted=self.defaulted,
                         sources=("mlperf",))


def results_query(f: ResultFilter, *, units: list[str], min_result: float | None,
                  max_result: float | None) -> ListQuery:
    """MLPerf result rows; ``accelerator`` matches an id or the name as published. Power rows
    (Watts, MLPerf's power measurements of a result) only when ``units`` asks for them: a
    default list holds throughput results alone, not two kinds of figure in one column."""
    accs = f.accelerator
    q = f.model_copy(update={"accelerator": []}).query("mlperf_result", MlperfResultPublic)
    q.equals["units"] = units
    if not units:
        q.where.append(("NOT t.is_power", []))
    if accs:  # also the name as published, for spellings no id maps
        q.any_of.append(AnyOf((("accelerator_id", False, Accelerators(tuple(accs))),
                               ("accelerator_model_name", True,
                                [a.strip().lower() for a in accs]))))
        q.known = f.known()
    if min_result is not None or max_result is not None:
        q.ranges["result"] = (min_result, max_result)
    return q


def ratios_query(f: ResultFilter, *, include_flagged: bool, min_ratio: float | None,
                 max_ratio: float | None) -> ListQuery:
    """Server/Offline and Interactive/Offline ratios."""
    q = f.query("scenario_ratio", ScenarioRatioPublic)
    if not include_flagged:
        q.equals["flagged"] = [False]
    if min_ratio is not None or max_ratio is not None:
        q.ranges["ratio"] = (min_ratio, max_ratio)
    return q


def latency_query(f: ResultFilter, *, answer_tokens: int | None) -> ListQuery:
    """Latency bounds, with the time of an answer of ``answer_tokens`` when asked."""
    q = f.query("latency_bound", LatencyBoundPublic)
    q.sources = ("mlperf", "mlperf_rules")
    q.subquery = ("SELECT *, ?::INTEGER AS answer_tokens, "
                  "(ttft_ms + (?::INTEGER - 1) * tpot_ms) / 1000.0 AS answer_seconds "
                  "FROM latency_bound", [answer_tokens, answer_tokens])
    return q


def per_accelerator_query(f: ResultFilter, *, units: list[str]) -> ListQuery:
    """Throughput results per accelerator (systems with accelerators only)."""
    q = f.query("result_per_accelerator", PerAcceleratorPublic)
    q.equals["units"] = units
    return q


def energy_query(f: ResultFilter, *, units: list[str]) -> ListQuery:
    """Work per joule of results with a power measurement."""
    q = f.query("energy_efficiency", EnergyPublic)
    q.equals["units"] = units
    return q


def trends_query(f: ResultFilter) -> ListQuery:
    """Per accelerator, model family, scenario and units: the best per-accelerator result of
    each round among the results ``f`` selects (its division and availability included), with
    the change against the previous round that has one; oldest round first unless sorted.

    ``round`` picks the rounds shown, after the window: inside it, it would leave lag() no
    earlier round to compare with (round=v6.1 served every change as NULL). Every other filter
    selects results consistently in every round (a partition key, or which rows compete for a
    round's best: division, availability, organization, model id, system), so it applies
    before the best is taken and the comparison stays like with like."""
    where, params = f.model_copy(update={"round": []}).where("result_per_accelerator")
    wider = f.model_copy(update={"division": [], "availability": []}).query(
        "result_per_accelerator", PerAcceleratorPublic)
    wider.where.append(("t.accelerator_id IS NOT NULL", []))  # as the trend itself reads
    return ListQuery(relation="accelerator_trend", public=TrendPublic,
                     subquery=(derived.trend_sql(where), params),
                     any_of=[a for a in f.any_of() if a.terms[0][0] == "round"],
                     sort=["accelerator_id", "model_family", "scenario", "units", "round"],
                     known=f.known(), note=f.note(), defaulted=f.defaulted,
                     sources=("mlperf",),  # the best per round exists where results do
                     wider=wider)


# The values observations add to what a cost filter knows (after MLPerf's, in its SQL).
OBSERVED_KNOWN = {
    "model": "SELECT model_id FROM observation UNION SELECT model FROM observation",
    "accelerator": "SELECT accelerator_id FROM observation",
}


def costs_query(f: ResultFilter, *, bases: list[str], rates: list[float], region: str,
                offer: str, os: str, as_of: datetime | None,
                price_status: list[str], evidence: list[str] | None = None,
                providers: list[str] | None = None,
                accelerator_rates: dict[str, float] | None = None) -> ListQuery:
    """Cost per million tokens for every Tokens/s result, on the requested price bases.

    cost = rate x total_accelerators / (tokens/s x 3600) x 1e6. On the ``list_price`` basis the
    rate is the cheapest Azure price per accelerator-hour of the result's accelerator in the
    region/offer/OS valid at ``as_of`` (now by default); a result whose accelerator has no such
    price gets price_status 'no price' and a NULL cost, never zero. ``assumed`` rates are
    labelled ``assumption``. ``premium_vs_offline`` is this cost / the same system's Offline
    cost (= offline throughput / this throughput).

    ``evidence`` names what is priced: ``measured`` (MLPerf's results, the default),
    ``third_party_measured`` (InferenceX's observations) and ``self_measured`` (imported runs):
    each observation as a system of its every GPU serving its output tokens/s, by the same
    formula (``frontier.cost_input_sql``). Round, division and availability filter MLPerf's rows.

    ``providers`` prices the list_price basis per provider instead (``provider_price``: the
    Azure API and every cloud of the SkyPilot catalog), each provider's cheapest rate for the
    offer in any region; ``all`` names every provider and adds the cheapest and the median
    across them. ``accelerator_rates`` are assumed rates of one accelerator each, beside the
    flat ``rates``.
    """
    kinds = evidence or [Evidence.measured.value]
    providers = _providers(providers)
    # The cost rows depend on the pricing parameters alone; the result filters apply outside,
    # so the same rows serve every filter (``keep``).
    sql, params = _cost_rows(tuple(kinds), tuple(bases), tuple(rates), region, offer, os,
                             as_of, tuple(providers), tuple((accelerator_rates or {}).items()))
    q = _of_evidence(f.query("costs", CostPublic,
                             observed=[k for k in kinds if k != Evidence.measured]), kinds)
    q.subquery, q.keep = (sql, list(params)), True
    asked = tuple(p for p in providers or () if p != "all")
    if asked:
        q.known.append(Known("provider", asked, PRICE_PLACES["provider"]))
    q.equals["price_status"] = price_status
    if "list_price" in bases and not providers:  # a row Azure does not price: said, and why
        q.caveat = Caveat("price_status = 'no price'", "{n} rows say 'no price' ({why}); "
                          "basis=assumed gives them a cost at assumed rates",
                          f"no Azure list price for their accelerator in {region} "
                          f"({offer}, {os})", "azure_prices")
        if set(price_status) == {"priced"}:  # only Azure's rows can answer: its absence says why
            q.sources = (*q.sources, "azure_prices")
    return q


@lru_cache(maxsize=256)  # a dashboard asks the same prices again and again
def _cost_rows(kinds: tuple[str, ...], bases: tuple[str, ...], rates: tuple[float, ...],
               region: str, offer: str, os: str, as_of: datetime | None,
               providers: tuple[str, ...], per: tuple[tuple[str, float], ...]
               ) -> tuple[str, tuple]:
    """The cost rows of /v1/costs for these pricing parameters: SQL and bound parameters."""
    source, source_params = cost_input_sql(list(kinds))
    parts: list[str] = []
    params: list[object] = []
    if "list_price" in bases:
        sql, more = _list_price_part(source, source_params, list(providers), region=region,
                                     offer=offer, os=os, as_of=as_of)
        parts.append(sql)
        params += more
    if "assumed" in bases:
        sql, more = _assumed_part(source, source_params, list(rates), dict(per))
        parts.append(sql)
        params += more
    if not parts:
        raise QueryError("basis must be list_price and/or assumed", param="basis")
    return " UNION ALL BY NAME ".join(f"({p.strip()})" for p in parts), tuple(params)


def _assumed_part(source: str, source_params: list, rates: list[float],
                  per: dict[str, float]) -> tuple[str, list]:
    """The assumed-rate cost rows of ``source``: each flat rate for every accelerator, and
    each accelerator's own rate (``per``) for its rows; SQL and bound parameters."""
    select = derived.PRICED_RESULT_COLUMNS
    return (f"""
            SELECT r.id || ':assumed:' || coalesce(a.only || ':', '')
                       || CAST(a.rate AS VARCHAR) AS id, {select},
                   'assumed' AS price_basis, NULL::VARCHAR AS provider, NULL::VARCHAR AS region,
                   NULL::VARCHAR AS offer, NULL::VARCHAR AS os,
                   NULL::VARCHAR AS reservation_term, NULL::VARCHAR AS sku,
                   NULL::VARCHAR AS price_id,
                   NULL::TIMESTAMPTZ AS price_valid_from,
                   a.rate AS rate_per_accelerator_hour, 'assumed' AS price_status,
                   {derived.result_cost("a.rate")} AS cost_per_million_tokens,
                   {derived.evidence_basis("r", Evidence.assumption)} AS basis
            FROM {source} r JOIN (
                SELECT NULL::VARCHAR AS only, unnest(?::DOUBLE[]) AS rate
                UNION ALL SELECT unnest(?::VARCHAR[]), unnest(?::DOUBLE[])) a
              ON a.only IS NULL OR a.only = r.accelerator_id""",
            [*source_params, sorted(set(rates)), list(per), list(per.values())])


def _list_price_part(source: str, source_params: list, providers: list[str], *, region: str,
                     offer: str, os: str, as_of: datetime | None) -> tuple[str, list]:
    """The list_price rows of /v1/costs and their parameters: Azure in one region/offer/OS, or
    per provider when ``providers`` names some (``all``: every one, cheapest and median)."""
    valid, valid_params = "valid_to IS NULL", []
    if as_of is not None:
        valid = "valid_from <= ? AND (valid_to IS NULL OR valid_to > ?)"
        valid_params = [as_of, as_of]
    if providers:
        named = [p for p in providers if p != "all"]
        every = len(named) < len(providers)
        listed_ = [] if every else named
        return (derived.provider_cost_sql(valid, every=every, inputs=source),
                [offer, *valid_params, listed_, listed_, *source_params,
                 *(source_params if every else [])])
    ask = "SELECT lower(?::VARCHAR) AS region, ?::VARCHAR AS offer, ?::VARCHAR AS os"
    return (derived.list_price_cost_sql(valid, ask=ask, inputs=source),
            [region, offer, os, *valid_params, *source_params])


def _of_evidence(q: ListQuery, kinds: list[str]) -> ListQuery:
    """``q`` over rows of the evidence ``kinds``: the models and accelerators observations
    name are known, and its source is the one kind's (several: none to require)."""
    if any(k != Evidence.measured for k in kinds):
        q.known = [Known(k.param, k.values, f"SELECT * FROM ({k.sql}) UNION "
                         f"{OBSERVED_KNOWN[k.param]} ORDER BY 1")
                   if k.param in OBSERVED_KNOWN else k for k in q.known]
    q.sources = (EVIDENCE_SOURCE[Evidence(kinds[0])],) if len(kinds) == 1 else ()
    return q


def claim_checks_query(*, round: list[str], vendor: list[str], evidence: list[str],
                       metric: list[str], verdict: list[str], division: list[str],
                       availability: list[str]) -> ListQuery:
    """Each claim next to the measured evidence, per round (6.1 and V6.1 are v6.1), the
    counterpart chosen among the results of ``division`` and ``availability`` (empty: all)."""
    rounds = ResultFilter(round=round)._rounds()
    q = ListQuery(relation="claim_check", public=ClaimCheckPublic, equals={
        "round": rounds, "vendor": vendor, "evidence": evidence, "metric": metric,
        "verdict": verdict}, casefold=("vendor", "verdict"),
        sources=("curated", "mlperf"))  # each claim against each round's results
    kept = [(column, values) for column, values in (("division", division),
                                                    ("availability", availability)) if values]
    if kept:  # the counterparts differ per choice: computed once per choice (``keep``)
        where = " AND ".join(f"list_contains(?::VARCHAR[], {column})" for column, _ in kept)
        q.subquery, q.keep = (derived.claim_check_sql(where), [v for _, v in kept]), True
    return q


def claims_query(*, vendor: list[str], evidence: list[str], metric: list[str], model: list[str],
                 product: str | None) -> ListQuery:
    """Curated claims; ``model`` matches a claim's model or its family, spellings normalised
    as MLPerf's are."""
    q = ListQuery(relation="claim", public=ClaimPublic, equals={
        "vendor": vendor, "metric": metric, "evidence": evidence}, casefold=("vendor",),
        sources=("curated",))
    if model:
        models = [normalise_model(m) for m in model]
        q.any_of.append(AnyOf((("model", False, models), ("model_family", False, models))))
    if product:
        q.contains["product"] = product
    return q


def hardware_query(*, hardware: list[str], vendor: list[str], metric: list[str],
                   kind: list[str]) -> ListQuery:
    """Hardware specs with the hardware they describe."""
    q = ListQuery(relation="hardware_catalog", public=HardwareCatalogPublic, equals={
        "hardware_id": hardware, "vendor": vendor, "metric": metric, "kind": kind},
        casefold=("hardware_id", "vendor"), sources=("curated",))
    for param, column, values in (("hardware", "hardware_id", hardware), ("vendor", "vendor", vendor),
                                  ("metric", "metric", metric), ("kind", "kind", kind)):
        if values:  # a value the catalogue does not know is said, with the known ones
            q.known.append(Known(param, tuple(v.strip() for v in values),
                                 f"SELECT DISTINCT {column} FROM hardware_catalog ORDER BY 1"))
    return q


def models_query(*, illustrative: bool | None) -> ListQuery:
    """Model shapes, optionally only the illustrative ones (or only real models)."""
    q = ListQuery(relation="model_shape", public=ModelShapePublic, sources=("curated",))
    if illustrative is not None:
        q.equals["illustrative"] = [illustrative]
    return q


def rules_query(*, model: list[str], scenario: list[str], current: bool) -> ListQuery:
    """Latency limits; ``current`` keeps the latest rules document's only."""
    q = ListQuery(relation="benchmark_rule", public=BenchmarkRulePublic, equals={
        "model_family": [model_family(normalise_model(m)) for m in model], "scenario": scenario},
        sources=("mlperf_rules",))
    if current:
        q.where.append((
            "t.source_snapshot_id = (SELECT id FROM source_snapshot WHERE kind = 'rules_document' "
            "ORDER BY fetched_at DESC LIMIT 1)", []))
    return q


def _valid_at(moment: datetime | None) -> tuple[str, list]:
    """Price versions valid at ``moment`` (default: now, i.e. current and still listed)."""
    if moment is None:
        return "t.valid_to IS NULL", []
    return "t.valid_from <= ? AND (t.valid_to IS NULL OR t.valid_to > ?)", [moment, moment]


def prices_query(*, sku: list[str], accelerator: list[str], region: list[str],
                 price_type: list[str], offer: list[str], os: list[str],
                 as_of: datetime | None, provider: list[str] | None = None,
                 source: list[str] | None = None) -> ListQuery:
    """Each price version valid at ``as_of`` of every provider and source (or those named),
    with the accelerator its VM size rents."""
    named = _providers(provider)
    q = ListQuery(relation="price_catalog", public=PriceCatalogPublic, equals={
        "provider": named, "price_source": source or [], "arm_sku_name": sku, "arm_region_name": region,
        "price_type": price_type, "offer": offer, "os": os},
        casefold=("arm_sku_name", "arm_region_name"),
        sources=tuple(source or ()) or _price_sources(named), any_source=True)
    if named:
        q.known.append(Known("provider", tuple(named),
                             "SELECT DISTINCT provider FROM price_catalog ORDER BY 1"))
    q.where.append(_valid_at(as_of))
    if accelerator:
        q.any_of.append(AnyOf((("accelerator_id", False, Accelerators(tuple(accelerator))),)))
        q.known.append(Known("accelerator", tuple(accelerator),
                             "SELECT DISTINCT accelerator_id FROM price_catalog ORDER BY 1"))
    for param, values, column in (("sku", sku, "arm_sku_name"), ("region", region,
                                                                 "arm_region_name")):
        if values:
            q.known.append(Known(param, tuple(values), f"SELECT DISTINCT {column} "  # noqa: S608
                                 "FROM price_catalog ORDER BY 1"))
    return q


def price_history_query(*, sku: str, region: list[str], offer: list[str],
                        os: list[str], provider: list[str] | None = None,
                        source: list[str] | None = None) -> ListQuery:
    """Every version of one VM size's prices (of the providers and sources named, else every
    one), oldest first per price unless sorted."""
    named = _providers(provider)
    return ListQuery(relation="price_catalog", public=PriceCatalogPublic, equals={
        "provider": named, "price_source": source or [], "arm_sku_name": [sku],
        "arm_region_name": region, "offer": offer, "os": os},
        sort=["price_key", "valid_from"], casefold=("arm_sku_name", "arm_region_name"),
        sources=tuple(source or ()) or _price_sources(named), any_source=True,
        known=[Known("sku", (sku,), "SELECT DISTINCT arm_sku_name FROM price_catalog "
                     "ORDER BY 1")])


def _providers(named: list[str] | None) -> list[str]:
    """Provider names as the warehouse writes them (lower case), whatever case was asked."""
    return [p.strip().lower() for p in named or []]


def _price_sources(providers: list[str]) -> tuple[str, ...]:
    """The sources whose rows a price query of these providers reads (any one will do)."""
    if providers == ["azure"]:
        return ("azure_prices",)
    return ("cloud_prices",) if providers and "azure" not in providers else PRICE_SOURCES


def sources_query(*, source: list[str]) -> ListQuery:
    """Every source snapshot (fetched body)."""
    q = ListQuery(relation="source_snapshot", public=SourceSnapshotPublic,
                  equals={"source": source})
    if source:
        q.known.append(Known("source", tuple(v.strip() for v in source),
                             "SELECT DISTINCT source FROM source_snapshot ORDER BY 1"))
    return q


# Sequence lengths fit the warehouse's INTEGER columns with room to spare.
MAX_TOKENS = 10_000_000
Tokens = Annotated[int, Field(ge=0, le=MAX_TOKENS)]
MODEL = ("Model: the warehouse model id or family (deepseek-r1, gpt-oss-120b), the InferenceX "
         "raw key (dsr1) or its display name (DeepSeek-R1-0528).")
ACCELERATOR = ("Accelerator: an id (nvidia-b200-sxm-180gb), a short name (B200, MI355X) or the "
               "InferenceX hardware key (b200, gb200).")


def day(name: str, value: str | None) -> date | None:
    """A YYYY-MM-DD parameter as a date; a 422 naming ``name`` when it is not one."""
    if value is None:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise QueryError(f"{name}: {value!r} is not a date (YYYY-MM-DD)", param=name) from None


class ObservationFilter(BaseModel):
    """Filters of InferenceX observations, declared once: the API's query parameters
    (``ObservationParams``) and ``observations_query`` read these fields. ``model`` matches the
    warehouse model id (family), the raw key or the display name; ``accelerator`` an
    accelerator id, a short name or the InferenceX hardware key."""

    model: list[str] | None = Field(None, description=MODEL)
    accelerator: list[str] | None = Field(None, description=ACCELERATOR)
    framework: list[str] | None = Field(None, description="Serving framework key, e.g. sglang, "
                                        "trt, vllm, dynamo-trt.")
    precision: list[str] | None = Field(None, description="fp4, fp8, bf16 or int4.")
    isl: list[Tokens] | None = Field(None, description="Input tokens, e.g. 1024 or 8192.")
    osl: list[Tokens] | None = Field(None, description="Output tokens, e.g. 1024 or 8192.")
    power_status: list[str] | None = one_of(POWER_STATUSES, "valid, unsupported_schema, "
                                            "invalid, legacy_unverified or none.")
    date_from: str | None = Field(None, description="Observed on or after (YYYY-MM-DD).",
                                  json_schema_extra=DATE)
    date_to: str | None = Field(None, description="Observed on or before (YYYY-MM-DD).",
                                json_schema_extra=DATE)

    def dates(self) -> tuple[date | None, date | None]:
        """The date window, checked."""
        return day("date_from", self.date_from), day("date_to", self.date_to)


def observations_query(f: ObservationFilter, as_of: datetime | None = None) -> ListQuery:
    """InferenceX observations with their mapped ids, each row's version valid at ``as_of``
    (now by default: the current versions), newest first unless sorted."""
    listed = ("t.withdrawn_at IS NULL", []) if as_of is None else (  # and not withdrawn by then
        "(t.withdrawn_at IS NULL OR t.withdrawn_at > ?)", [as_of])
    q = ListQuery(relation="observation", public=ObservationPublic,
                  where=[_valid_at(as_of), listed],
                  equals={"isl": f.isl or [], "osl": f.osl or [],
                          "power_status": f.power_status or [], "framework": f.framework or [],
                          "precision": f.precision or []},
                  casefold=("framework", "precision"),
                  sort=["-observed_on", "model", "hardware", "framework", "conc"],
                  sources=("inferencex",))
    if f.model:
        folded = [m.strip().lower() for m in f.model]
        q.any_of.append(AnyOf((("model_id", True, folded), ("model", True, folded),
                               ("model_display", True, folded))))
        q.known.append(Known("model", tuple(folded), "SELECT model_id FROM observation UNION "
                             "SELECT model FROM observation UNION SELECT model_display FROM "
                             "observation ORDER BY 1"))
    if f.accelerator:
        q.any_of.append(AnyOf((("accelerator_id", False, Accelerators(tuple(f.accelerator))),
                               ("hardware_base", True, [a.strip().lower() for a in f.accelerator]))))
        q.known.append(Known("accelerator", tuple(a.strip() for a in f.accelerator),
                             "SELECT accelerator_id FROM observation UNION SELECT hardware_base "
                             "FROM observation ORDER BY 1"))
    date_from, date_to = f.dates()
    if date_from is not None:
        q.where.append(("t.observed_on >= ?", [date_from]))
    if date_to is not None:
        q.where.append(("t.observed_on <= ?", [date_to]))
    return q


class FrontierFilter(BaseModel):
    """What a frontier request asks, declared once: the API's query parameters
    (``FrontierParams``, which checks offer, OS and divisions) and ``frontier_query`` read
    these fields."""

    model: str = Field(description=MODEL)
    isl: int = Field(ge=1, le=MAX_TOKENS, description="Input tokens (InferenceX runs 1024 and "
                     "8192).")
    osl: int = Field(ge=1, le=MAX_TOKENS, description="Output tokens (InferenceX runs 1024 and "
                     "8192).")
    accelerator: list[str] | None = Field(None, description=ACCELERATOR + " Default: every "
                                          "accelerator measured (one line each).")
    framework: list[str] | None = Field(None, description="Only these frameworks (default: the "
                                        "best of any framework on each accelerator).")
    precision: list[str] | None = Field(None, description="Only these precisions.")
    spec_method: list[str] | None = Field(None, description="Only these speculative-decoding "
                                          "methods: none or mtp (default: both, each its own "
                                          "configuration on the curve).")
    disagg: bool | None = Field(None, description="true: only disaggregated configurations; "
                                "false: only aggregated ones (default: both).")
    interactivity: float | None = Field(None, gt=0, le=1e6, description="Tokens/s per user to "
                                        "answer at: interpolated between the neighbouring "
                                        "frontier points, 'out of range' outside them.")
    date: str | None = Field(None, description="The curves as they stood on this date: each "
                             "configuration's latest run on or before it (YYYY-MM-DD).",
                             json_schema_extra=DATE)
    rate: float = Field(ASSUMED_RATES[1], gt=0, le=1e4, description="Assumed USD per GPU-hour "
                        "for cost per million tokens.")
    region: str = Field("eastus2", description="Azure region of the list-price cost.")
    offer: str = one_of(OFFERS, "Azure offer of the list-price cost.", "on_demand")
    os: str = one_of(OPERATING_SYSTEMS, "Azure OS of the list-price cost.", "linux")
    provider: str | None = Field(None, description="Price the list-price cost on this provider "
                                 "instead of one Azure region: azure, a SkyPilot catalog cloud "
                                 "(aws, gcp, vast...) or cheapest (any provider, any region), "
                                 "at its cheapest rate for the offer; list_price_sku then names "
                                 "the provider.")
    include_dominated: bool = Field(False, description="Also return the dominated points "
                                    "(kind=dominated).")
    mlperf_division: list[str] | None = one_of((*DIVISIONS, "all"), "MLPerf divisions "
                                               "overlaid: closed (default), open, or all.")
    mlperf_availability: list[str] | None = one_of((*AVAILABILITY, "all"), (
        "Availability of the MLPerf systems overlaid: available (default: what a buyer can "
        "get), preview, rdi, or all."))
    mlperf_accelerator: list[str] | None = Field(None, description=(
        "Also overlay MLPerf results of these accelerators, beside those of the accelerators "
        "drawn: e.g. your own run on one accelerator next to MLPerf's on another."))


def frontier_query(f: FrontierFilter) -> ListQuery:
    """The frontier of ``f.model`` at ``isl``/``osl`` per accelerator, MLPerf results on the
    same axes, and the answer at ``interactivity`` (see ``warehouse.figures.frontier``)."""
    params: list[object] = [
        f.model.strip(), f.isl, f.osl,
        Accelerators(tuple(f.accelerator)) if f.accelerator else [],
        [v.strip().lower() for v in f.framework or []],
        [v.strip().lower() for v in f.precision or []],
        [v.strip().lower() for v in f.spec_method or []], f.disagg, day("date", f.date),
        f.interactivity, f.rate, f.region, f.offer, f.os, f.include_dominated,
        f.mlperf_division or [],
        Accelerators(tuple(f.mlperf_accelerator)) if f.mlperf_accelerator else [],
        f.provider.strip().lower() if f.provider else None, f.mlperf_availability or []]
    q = ListQuery(relation="frontier", public=FrontierPointPublic,
                  subquery=(frontier_sql(), params),
                  sort=["series", "kind", "interactivity"], sources=("inferencex",))
    q.known.append(Known("model", (f.model.strip(),), "SELECT model_id FROM observation UNION "
                         "SELECT model FROM observation UNION SELECT model_display FROM "
                         "observation ORDER BY 1"))
    return q


def claim_observations_query(*, vendor: list[str], model: list[str]) -> ListQuery:
    """Per-user speed claims next to the nearest comparable InferenceX observation."""
    q = ListQuery(relation="claim_observation_check", public=ClaimObservationPublic,
                  equals={"vendor": vendor}, casefold=("vendor",),
                  sources=("curated", "inferencex"))
    if model:
        q.any_of.append(AnyOf((("model", True, [m.strip().lower() for m in model]),)))
    return q
