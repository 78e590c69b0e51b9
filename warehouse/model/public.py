"""The Public models: exactly the columns the API returns, derived from the schema.

Tables follow the FastAPI full-stack template's family (``XBase`` → table ``X`` → ``XPublic``);
rows of derived views and queries are declared here as column lists (``relation``) over
the column groups of ``derived``, typed by one map, documented by the views' comments. A list
route selects only its model's fields, so a column added to a table or view reaches the API
only once it is listed here or in a group (reviewed). Rows that carry a ``source_snapshot_id``
also carry the fetched file's name, URL, fetch time and sha256 (``SourceLink``) — never under
a name a table already uses, so a claim shows its citation (``source_url``) and its file's
snapshot URL (``source_snapshot_url``) side by side.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, Field, create_model

from warehouse.figures import derived, frontier
from warehouse.model.schema import (
    TABLES,
    AzurePriceBase,
    BenchmarkRuleBase,
    ClaimBase,
    ClaimHistoryBase,
    HardwareSpecBase,
    InferencexObservationBase,
    MlperfResultBase,
    MlperfRevisionBase,
    ModelShapeBase,
    SourceSnapshotBase,
)
from warehouse.model.vocabulary import OFFERS_SAID


class SourceLink(BaseModel):
    """The source snapshot a fact row was parsed from (joined from ``source_snapshot``)."""

    source_name: str | None = Field(None, description="Source the row came from (mlperf, "
                                    "mlperf_rules, azure_prices, curated).")
    source_snapshot_url: str | None = Field(None, description="Where the source file's bytes "
                                            "were fetched from (credentials removed).")
    source_fetched_at: datetime | None = Field(None, description="When those bytes were fetched "
                                               "(UTC).")
    source_sha256: str | None = Field(None, description="sha256 of those bytes (the raw store "
                                      "keeps them under this name).")


SOURCE_COLUMNS = tuple(SourceLink.model_fields)


class MlperfResultPublic(MlperfResultBase, SourceLink):
    """One MLPerf result row (evidence: measured) and its source file."""


class ClaimPublic(ClaimBase, SourceLink):
    """One curated claim: its citation (source_url) and the curated file it was read from."""


class ClaimHistoryPublic(ClaimHistoryBase, SourceLink):
    """An earlier version of an edited claim, or a withdrawn claim."""


class MlperfRevisionPublic(MlperfRevisionBase, SourceLink):
    """An earlier version of a result a re-published round revised, or a withdrawn result."""


class ModelShapePublic(ModelShapeBase, SourceLink):
    """A model shape for the calculators."""


class BenchmarkRulePublic(BenchmarkRuleBase, SourceLink):
    """A TTFT/TPOT limit from the MLPerf rules document."""


class SourceSnapshotPublic(SourceSnapshotBase):
    """One fetched body: where from, when, its sha256."""


class HardwareCatalogPublic(HardwareSpecBase, SourceLink):
    """A hardware spec with the hardware it describes."""

    hardware_name: str = Field(description="Display name of the hardware.")
    vendor: str = Field(description="Vendor.")
    kind: str = Field(description="accelerator, system (several accelerators) or rack.")
    accelerator_id: str | None = Field(None, description="Accelerator a system is built from.")
    accelerator_count: int | None = Field(None, description="Accelerators in the system.")


class PriceCatalogPublic(AzurePriceBase, SourceLink):
    """A price version of any provider (the Azure API's, or a SkyPilot catalog cloud's) with
    the accelerator its VM size rents."""

    provider: str = Field(description="azure for the Azure API's prices, else the SkyPilot "
                          "catalog's cloud name (aws, gcp, lambda, runpod, vast...).")
    price_source: str = Field(description="azure_prices (the Azure API) or cloud_prices (the "
                              "SkyPilot catalog).")
    zone: str | None = Field(None, description="Availability zone, where the catalog gives one.")
    # Azure-only identifiers: NULL on the catalog's rows (a narrower type than the table's)
    meter_id: str | None = Field(None, description="Azure meterId (NULL for catalog prices).")  # type: ignore[assignment]
    sku_id: str | None = Field(None, description="Azure skuId (NULL for catalog prices).")  # type: ignore[assignment]
    accelerator_id: str | None = Field(None, description="Accelerator the VM size rents (NULL "
                                       "when unmapped).")
    accelerators: int | None = Field(None, description="Accelerators per VM.")
    price_per_accelerator_hour: float | None = Field(
        None, description="hourly_price / accelerators per VM (NULL when unmapped).")


# ----------------------------------------------------------------- rows of views and queries

_TABLE_MEANINGS: dict[tuple[str, str], str] = {
    (str(model.__table__.name), name): field.description  # type: ignore[attr-defined]
    for model in TABLES for name, field in model.model_fields.items() if field.description}


def meaning(view: str | None, column: str) -> str:
    """What a column of a derived relation means, as its COMMENT says (``derived.
    column_meaning`` over the schema's descriptions); without a view, a meaning common to
    several views."""
    if view is None:
        return derived.COMMON_COLUMNS.get(column, "")
    return derived.column_meaning(view, column,
                                  lambda t, c: _TABLE_MEANINGS.get((t, c))) or ""


def col(view: str | None, column: str, described: str | None = None) -> Any:
    """A nullable column of a derived relation, documented by ``described`` or by what the
    warehouse says it means (``meaning``)."""
    return Field(None, description=described or meaning(view, column))


# The type of every non-text column of the derived relations (a name means one thing in all of
# them); any other column is text.
_TYPES: dict[str, Any] = {name: kind | None for kind, names in (
    (float, "offline_result other_result ratio interactive_premium result ttft_ms tpot_ms "
            "reference_tokens min_tokens_per_s_per_user max_concurrent_streams "
            "reference_answer_seconds answer_seconds per_accelerator per_gpu memory_bandwidth_tbs "
            "nameplate_power_w per_accelerator_per_tbs per_accelerator_per_nameplate_kw watts "
            "per_joule joules_per_unit previous_per_accelerator change_vs_previous "
            "premium_vs_offline rate_per_accelerator_hour cost_per_million_tokens claim_value "
            "closest_result recomputed_value claim_over_recomputed tokens_per_s_per_user "
            "bandwidth memory input_tput_per_gpu output_tput_per_gpu physical_ratio "
            "observation_interactivity observation_output_tput_per_gpu fastest_interactivity "
            "interactivity tput_per_gpu output_tput_per_decode_gpu requested_interactivity "
            "nearest_interactivity nearest_output_tput_per_gpu measured_interactivity_min "
            "measured_interactivity_max tpot_limit_ms list_price_per_accelerator_hour "
            "list_price_cost_per_million_tokens list_price_cost_per_million_total_tokens "
            "cost_per_million_input_tokens cost_per_million_total_tokens joules_per_output_token "
            "request_rate duration_s total_input_tokens total_output_tokens request_throughput"),
    (int, "total_accelerators answer_tokens results spellings comparable_results prefill_gpus "
          "decode_gpus gpus isl osl conc comparable_observations run_index completed_requests "
          "failed_requests incomplete_requests"),
    (bool, "flagged offline_inferred other_inferred vendor_or_accelerator_in_round fits "
           "reconciled current reached disagg preview lengths_match"),
    (date, "claimed_on checked_on observed_on"),
    (datetime, "price_valid_from run_at")) for name in names.split()}

M = TypeVar("M", bound=BaseModel)
# The column groups of derived.py, as field lists.
KEYS, SYSTEM, LINEAGE, CITED = (" ".join(group) for group in (
    derived.MLPERF_KEYS, derived.SYSTEM_KEYS, derived.LINEAGE, derived.CITATION))
# A pair's citation columns: each of its two results' ID and link, then the one they share.
PAIR_CITED = " ".join([f"{p}{c}" for c in derived.CITATION[:2] for p in ("offline_", "other_")]
                      + [derived.CITATION[2]])


def relation(view: str | None, columns: str, carries: tuple[str, ...] = (),
             **described: str) -> Callable[[type[M]], type[M]]:
    """A Public model of a derived relation from its column list: one nullable field per name
    in ``columns``, in order, then each of ``carries`` it does not name, typed by ``_TYPES``
    and documented by ``described`` or by what ``view`` says the column means
    (``name@other``: what relation ``other`` says; ``name@``: the meaning common to several
    views). The decorated class gives the name, bases and docstring."""
    fields: dict[str, Any] = {}
    named = columns.split()
    names = {t.partition("@")[0] for t in named}
    for token in named + [c for c in carries if c.partition("@")[0] not in names]:
        name, at, other = token.partition("@")
        fields[name] = (_TYPES.get(name, str | None),
                        col((other or None) if at else view, name, described.get(name)))

    def build(cls: type[M]) -> type[M]:
        return create_model(cls.__name__, __base__=cls, __module__=cls.__module__,
                            __doc__=cls.__doc__, **fields)
    return build


@relation(
    "scenario_ratio", f"id {SYSTEM} scenario offline_result offline_units other_result "
    "other_units ratio interactive_premium unit_pairing flagged accelerator_id accelerator_model_name "
    "accelerator_mix total_accelerators availability offline_inferred other_inferred "
    f"offline_result_id other_result_id {LINEAGE} {PAIR_CITED}")
class ScenarioRatioPublic(BaseModel):
    """A Server/Offline or Interactive/Offline throughput ratio."""


@relation(
    "latency_bound", f"id {KEYS} availability ttft_ms tpot_ms reference_tokens "
    "min_tokens_per_s_per_user max_concurrent_streams reference_answer_seconds result_id "
    f"rule_id rule_basis@round_rule {LINEAGE} answer_tokens answer_seconds {CITED}",
    answer_tokens="The answer length asked for (answer_tokens=); NULL when not asked.",
    answer_seconds="(ttft_ms + (answer_tokens - 1) x tpot_ms) / 1000; NULL when not asked.")
class LatencyBoundPublic(BaseModel):
    """Bounds from the MLPerf latency limits for one result."""


@relation(
    "result_per_accelerator", f"id {KEYS} accelerator_model_name accelerator_mix availability "
    "per_accelerator gpus per_gpu memory_bandwidth_tbs nameplate_power_w per_accelerator_per_tbs "
    "per_accelerator_per_nameplate_kw result_id bandwidth_spec_id nameplate_spec_id "
    f"{LINEAGE} {CITED}")
class PerAcceleratorPublic(BaseModel):
    """A throughput result divided by the system's accelerators."""


@relation(
    "energy_efficiency", f"id {KEYS} availability watts per_joule per_joule_unit "
    f"joules_per_unit result_id power_result_id {LINEAGE} {CITED}")
class EnergyPublic(BaseModel):
    """Work per joule of a throughput (or stream) result with a power measurement."""


@relation(
    "accelerator_trend", "id accelerator_id model_family scenario units round per_accelerator "
    "results model_id system_name organization division availability framework platform "
    "result total_accelerators previous_round previous_per_accelerator change_vs_previous "
    "per_accelerator_per_tbs per_accelerator_per_nameplate_kw spellings "
    f"accelerator_model_name result_id {LINEAGE} {CITED}", carries=derived.SYSTEM_KEYS)
class TrendPublic(BaseModel):
    """One round of an accelerator's trend: its best per-accelerator result and the change."""


@relation(
    "cost_input", f"id@ result_id@ {KEYS} availability premium_vs_offline price_basis@ "
    "provider region offer os reservation_term sku price_id@ price_valid_from "
    f"rate_per_accelerator_hour@ price_status cost_per_million_tokens@ basis@ {CITED} "
    "evidence conc@observation isl@observation osl@observation interactivity@observation "
    "observed_on@observation run_url@observation file_name@observation",
    evidence="What was priced: measured (an MLPerf result), third_party_measured (an "
             "InferenceX observation) or self_measured (an imported run); ?evidence= asks.",
    premium_vs_offline="This cost / the same system's Offline cost (= Offline / this "
                       "throughput).",
    provider="Who rents at that list price: azure (its own API; the default), a cloud of the "
             "SkyPilot catalog (?provider=), or, with provider=all, cheapest (the provider "
             "with the lowest rate) and median (the median of the providers' rates); NULL for "
             "assumed rates.",
    region="Region of the list price (Azure's, or the cheapest region of the provider; NULL "
           "for assumed rates and the median).",
    offer=f"Offer of the list price: {OFFERS_SAID} (NULL for assumed rates).",
    os="Operating system of the list price (NULL for assumed rates).",
    reservation_term="Term of a reservation price (1 Year, 3 Years); a reservation's hourly "
                     "price means nothing without it.",
    sku="VM size or instance type of the cheapest price per accelerator-hour used.",
    price_valid_from="Since when that price version holds (with price_id: which version).",
    price_status="priced, no price (no list price for the accelerator: cost NULL) or "
                 "assumed.")
class CostPublic(BaseModel):
    """Cost per million tokens of one Tokens/s result or observation on one price basis."""


@relation(
    "claim_check", "id claim_id round vendor product model accelerator_id metric claim_value "
    "unit evidence claimed_on checked_on vendor_or_accelerator_in_round closest_result_id "
    "closest_result closest_scenario comparable_results recomputed_value "
    f"claim_over_recomputed verdict {LINEAGE} notice")
class ClaimCheckPublic(BaseModel):
    """A claim next to what the measured data says, per MLPerf round."""


@relation(
    None, "hardware model tokens_per_s_per_user fits basis bandwidth memory",
    hardware="Hardware id.", model="Illustrative model shape id.",
    tokens_per_s_per_user="Decode bound per user at batch 1 (tokens/s).",
    fits="Whether weights and KV cache fit in the hardware's memory.",
    bandwidth="Memory bandwidth used (B/s).", memory="Memory capacity used (B).")
class GridRowPublic(BaseModel):
    """The decode bound for one hardware × illustrative model pair."""


@relation(
    "observation", "accelerator_id model_id hardware_mapping model_mapping prefill_gpus "
    "decode_gpus gpus gpu_count_basis input_tput_per_gpu output_tput_per_gpu physical_ratio "
    "invariant_failures reconciled current "
    # self-measured runs (source self_measured): what was imported, and how
    "source tool tool_version schema_version import_id run_index file_name file_sha256 "
    "model_in_file note definition_note interactivity_basis run_at request_rate duration_s "
    "completed_requests failed_requests incomplete_requests total_input_tokens "
    "total_output_tokens request_throughput")
class ObservationPublic(InferencexObservationBase, SourceLink):
    """One InferenceX observation (third_party_measured) with the ids its keys map to."""


@relation(None, " ".join(frontier.COLUMNS), carries=tuple(
    f"{c}@mlperf_result" for c in derived.SYSTEM_KEYS if c not in derived.FRONTIER_RENAMES),
    **frontier.COLUMNS)
class FrontierPointPublic(BaseModel):
    """A point of the throughput–interactivity frontier: an InferenceX frontier (or dominated)
    observation, an MLPerf result on the same axes, or the answer at a requested
    interactivity."""


@relation(
    "claim_observation_check", "id claim_id vendor product model accelerator_id metric "
    "claim_value unit evidence claimed_on observation_id observation_interactivity "
    "observation_output_tput_per_gpu hardware framework precision isl osl conc observed_on "
    "run_url comparable_observations fastest_observation_id fastest_interactivity reached "
    "compared_on verdict basis notice")
class ClaimObservationPublic(BaseModel):
    """A per-user speed claim next to the nearest comparable InferenceX observation."""


# ----------------------------------------------------------------- envelopes and items

Row = TypeVar("Row", bound=BaseModel)


class ListPage(BaseModel, Generic[Row]):
    """The list envelope (JSON); ``format=csv|ndjson|parquet`` returns the rows alone."""

    snapshot_id: str | None = Field(description="The snapshot the rows come from.")
    total: int = Field(description="Rows matching the filters (all pages).")
    limit: int = Field(description="Rows per page.")
    offset: int = Field(description="Rows skipped.")
    next: str | None = Field(description="Absolute URL of the next page; null on the last.")
    hint: str | None = Field(None, description="When no row matches: why (a filter value this "
                             "snapshot does not know, with the known ones, or a default filter "
                             "that applied); null otherwise.")
    rows: list[Row]


class SourceSnapshotDetail(SourceSnapshotPublic):
    """A source snapshot and how many rows each fact table took from it."""

    rows: dict[str, int] = Field(description="Rows parsed from these bytes, per fact table.")


class ResultItem(BaseModel):
    snapshot_id: str | None
    row: MlperfResultPublic | None = Field(description="The result; null once withdrawn.")
    source: SourceSnapshotDetail | None
    history: list[MlperfRevisionPublic] = Field(description="Its earlier versions, oldest "
                                                "first (revised), or its last (withdrawn).")
    withdrawn: bool
    links: dict[str, str]


class ClaimItem(BaseModel):
    snapshot_id: str | None
    row: ClaimPublic | None = Field(description="The claim; null once withdrawn.")
    source: SourceSnapshotDetail | None
    history: list[ClaimHistoryPublic]
    withdrawn: bool


class SourceItem(BaseModel):
    snapshot_id: str | None
    row: SourceSnapshotDetail


class AcceleratorSku(BaseModel):
    sku: str
    accelerators: int | None


class AcceleratorSpelling(BaseModel):
    """One spelling of the accelerator in one MLPerf round."""

    round: str
    name: str = Field(description="The accelerator name as published.")
    match: str = Field(description="How it mapped: alias (a curated spelling) or identity (its "
                       "vendor, product, form factor and memory fit this id alone).")
    identity: str | None = Field(None, description="The name's identity as read: vendor "
                                 "product | form factor | memory ('-' where it does not say).")
    decorations: str | None = Field(None, description="What the name says besides the chip "
                                    "(power cap, partition mode, cooling, virtualized, ...).")
    rows: int = Field(description="mlperf_result rows with this spelling in the round.")


class Accelerator(BaseModel):
    id: str = Field(description="Accelerator id.")
    vendor: str | None
    name: str | None = Field(None, description="Display name.")
    note: str | None = Field(None, description="Reviewer's note on the accelerator.")
    mlperf_names: list[str] | None = Field(description="Curated spellings (data/accelerators."
                                           "yaml); decorated ones map by identity.")
    spellings: list[AcceleratorSpelling] = Field(default_factory=list, description=(
        "Every spelling seen in MLPerf, per round (newest first)."))
    azure_skus: list[AcceleratorSku] | None = Field(description="Azure VM sizes that rent it.")
    mlperf_results: int = Field(description="MLPerf result rows mapped to it.")
    figures: int = Field(0, description="Datasheet figures catalogued (see /v1/accelerators/{id}).")
    gaps: list[str] = Field(default_factory=list, description="Datasheet figures no source "
                            "gives (left empty, never guessed).")


class RoundCoverage(BaseModel):
    """How well one round's accelerator names map."""

    rows_with_accelerator: int = Field(description="Rows naming a single accelerator.")
    rows_mapped: int
    mapped_by_alias: int
    mapped_by_identity: int
    mapped_share: float | None = Field(None, description="rows_mapped / rows_with_accelerator.")
    rows_unmapped: int
    rows_ambiguous: int
    rows_mixed: int = Field(description="Rows of heterogeneous systems (several accelerator "
                            "kinds): no per-accelerator figure.")


class UnmappedName(BaseModel):
    round: str
    name: str
    rows: int


class AmbiguousName(UnmappedName):
    candidates: list[str] = Field(description="The ids the name's identity fits.")


class Accelerators(BaseModel):
    snapshot_id: str | None
    total: int
    rows: list[Accelerator]
    coverage: dict[str, RoundCoverage] = Field(default_factory=dict, description=(
        "Per MLPerf round: rows with an accelerator name, mapped, unmapped, ambiguous."))
    unmapped: list[UnmappedName] = Field(default_factory=list, description=(
        "Accelerator names that fit no catalogued id, per round."))
    ambiguous: list[AmbiguousName] = Field(default_factory=list, description=(
        "Accelerator names that fit several ids (reported, never guessed), per round."))
    gaps: dict[str, list[str]] = Field(default_factory=dict, description=(
        "Per accelerator id, the datasheet figures no source gives."))


class AcceleratorFigure(BaseModel):
    """One datasheet figure with its source."""

    metric: str
    value: float | None = Field(None, description="In SI units (B, B/s, FLOP/s, W).")
    value_text: str | None = Field(None, description="For figures in words (memory type, form "
                                   "factor, launch date).")
    unit: str | None
    display_value: float | None = Field(None, description="value in display_unit (GB, TB/s, "
                                        "TFLOPS, W).")
    display_unit: str | None = None
    evidence: str
    checked_on: date
    source_title: str
    source_url: str
    cited_via: str | None = Field(None, description="Set when source_url is a secondary page "
                                  "reproducing the vendor's figure.")
    vendor_url: str | None = None
    quote: str | None
    note: str | None


class AcceleratorRound(BaseModel):
    round: str
    results: int = Field(description="Performance rows in the round.")
    power_results: int
    organizations: int
    divisions: list[str]
    spellings: int


class AcceleratorDetail(BaseModel):
    snapshot_id: str | None
    id: str
    vendor: str | None
    name: str | None
    note: str | None
    identity: list[str] = Field(description="Identities read from its MLPerf spellings: vendor "
                                "product | form factor | memory.")
    mlperf_names: list[str]
    figures: list[AcceleratorFigure]
    gaps: list[str]
    spellings: list[AcceleratorSpelling]
    rounds: list[AcceleratorRound]
    azure_skus: list[AcceleratorSku]


class EvidenceLabel(BaseModel):
    label: str
    meaning: str


class Meta(BaseModel):
    snapshot_id: str | None
    rounds: list[str]
    models: list[str] = Field(description="Model ids (submitted, normalised).")
    model_families: list[str] = Field(description="Model families (ids without the accuracy "
                                      "target); every model filter takes a family or an id.")
    organizations: list[str]
    scenarios: list[str]
    accelerators: list[str]
    regions: list[str]
    observation_lengths: list[str] = Field(default_factory=list, description=(
        "Input/output token lengths ('8192/1024') of the current observations, InferenceX's "
        "and self-measured: the frontier's isl/osl."))
    evidence: list[EvidenceLabel]


class SourceHealth(BaseModel):
    source: str
    last_status: str
    last_attempt: str
    last_success: str | None
    message: str
    state: str = Field(description="fresh; stale (failed, its last good data is served); "
                       "never_loaded (failed, and no attempt ever succeeded: nothing to serve); "
                       "disabled (enabled = false: neither failed nor stale).")
    stale: bool
    stale_since: str | None
    stale_for_seconds: int | None = None


class ValidationSummary(BaseModel):
    errors: int
    warnings: list[str]
    no_rows: list[str] = Field(default_factory=list, description="Tables whose rules held only "
                               "because the table has no rows: checked nothing, not passed.")


class Ready(BaseModel):
    ready: bool
    snapshot_id: str | None
    reason: str | None = Field(description="Why nothing can be served, when not ready.")


class Health(BaseModel):
    snapshot_id: str | None
    status: str = Field(description="ok; degraded when a source is stale or never loaded (not "
                        "when one is disabled), the last refresh "
                        "failed, was rejected or was interrupted, or the published snapshot "
                        "cannot be read (an older one is served); unavailable when no readable "
                        "snapshot is left; empty before the first publish.")
    corrupt: dict[str, Any] | None = Field(None, description="The published snapshot that "
                                           "cannot be read: snapshot_id, reason, message.")
    published_at: datetime | None
    sources: list[SourceHealth]
    last_refresh: dict[str, Any] | None
    validation: ValidationSummary
    accelerators: dict[str, RoundCoverage] = Field(default_factory=dict, description=(
        "Accelerator-name coverage of the snapshot served, per MLPerf round."))


class Refreshes(BaseModel):
    snapshot_id: str | None
    total: int
    rows: list[dict[str, Any]] = Field(description="Run records, newest first: status, "
                                       "message, per-source outcome, stages, links.")


class ValidationRow(BaseModel):
    suite: str
    expectation: str
    table_name: str
    severity: str
    success: bool
    unexpected_count: int | None
    sample: str | None
    rows_checked: int | None = Field(None, description="Rows in the table when checked: 0 "
                                     "means 'no rows' (the rule checked nothing).")


class RefreshValidation(BaseModel):
    snapshot_id: str | None
    run_id: str
    status: str
    errors: int
    warnings: int
    rows: list[ValidationRow]


class CalcInput(BaseModel):
    value: float | None
    unit: str
    evidence: str
    origin: str = Field(description="warehouse, caller or default.")
    source: str | None = None
    note: str | None = None


class CalcResult(BaseModel):
    snapshot_id: str | None
    calculator: str
    evidence: str = Field(description="Always derived.")
    basis: str = Field(description="derived: the input labels, strongest first.")
    inputs: dict[str, CalcInput]
    outputs: dict[str, Any]
