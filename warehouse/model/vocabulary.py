"""The one vocabulary of perfledger: every closed set of terms is spelled here, once.

Parsers (``ingest/*``), validation suites, derived views and API parameter types import these
sets; a test checks that they all read the same ones. Sections:

    evidence      labels, their meanings and strength, the basis a derived row reports
    MLPerf        scenarios, divisions, availability, units (throughput, latency, power),
                  model-name normalisation
    prices        offers, operating systems, price types, hourly units, reservation terms
    InferenceX    measurer, attribution, power validity statuses, energy scopes, point kinds
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from enum import StrEnum
from functools import cache

# --------------------------------------------------------------------------- evidence


class Evidence(StrEnum):
    """What kind of evidence a row is. Closed vocabulary; see DESIGN.md."""

    measured = "measured"
    third_party_measured = "third_party_measured"
    self_measured = "self_measured"
    vendor_measured = "vendor_measured"
    vendor_claim = "vendor_claim"
    vendor_projection = "vendor_projection"
    paper_reported = "paper_reported"
    vendor_spec = "vendor_spec"
    list_price = "list_price"
    benchmark_rule = "benchmark_rule"
    assumption = "assumption"
    derived = "derived"


DESCRIPTIONS: dict[Evidence, str] = {
    Evidence.measured: "result of an audited cross-vendor benchmark (MLPerf)",
    Evidence.third_party_measured: "an independent measurement quoted with its measurer",
    Evidence.self_measured: "the buyer's own benchmark run, imported with the hardware they state",
    Evidence.vendor_measured: "the vendor's own measurement in a paper or report",
    Evidence.vendor_claim: "a dated vendor speed/price claim",
    Evidence.vendor_projection: "a claim the vendor itself marks as projected/unreleased",
    Evidence.paper_reported: "a research paper's authors reporting on their own technique",
    Evidence.vendor_spec: "datasheet peak figures",
    Evidence.list_price: "a published price, with the date it was observed",
    Evidence.benchmark_rule: "a limit set by the benchmark's rules",
    Evidence.assumption: "an input the user or the docs choose",
    Evidence.derived: "computed from other rows; lists its inputs and their labels",
}

# Higher is stronger evidence of what a system actually does. Facts that are not
# performance evidence (specs, prices, rules) rank with measurements: they are what they are.
STRENGTH: dict[Evidence, int] = {
    Evidence.measured: 6,
    Evidence.list_price: 6,
    Evidence.benchmark_rule: 6,
    Evidence.vendor_spec: 5,
    Evidence.third_party_measured: 4,
    Evidence.self_measured: 4,
    Evidence.vendor_measured: 3,
    Evidence.paper_reported: 3,
    Evidence.vendor_claim: 2,
    Evidence.assumption: 1,
    Evidence.vendor_projection: 0,
    Evidence.derived: 0,
}

# Which labels each fact table may hold (validation enforces it; curated parsers refuse the
# rest). Only mlperf_result holds `measured`; a curated file never does.
CLAIM_LABELS = frozenset({
    Evidence.third_party_measured, Evidence.vendor_measured, Evidence.vendor_claim,
    Evidence.vendor_projection, Evidence.paper_reported, Evidence.vendor_spec,
    Evidence.list_price, Evidence.assumption})
SPEC_LABELS = frozenset({Evidence.vendor_spec, Evidence.vendor_claim, Evidence.vendor_projection,
                         Evidence.vendor_measured, Evidence.assumption})
MODEL_SHAPE_LABELS = frozenset({Evidence.vendor_spec, Evidence.assumption,
                                Evidence.paper_reported})
TABLE_LABELS: dict[str, frozenset[Evidence]] = {
    "mlperf_result": frozenset({Evidence.measured}),
    "mlperf_result_revision": frozenset({Evidence.measured}),  # earlier versions of results
    "claim": CLAIM_LABELS,
    "claim_history": CLAIM_LABELS,  # earlier versions of claims: the same labels
    "hardware_spec": SPEC_LABELS,
    "model_shape": MODEL_SHAPE_LABELS,
    "benchmark_rule": frozenset({Evidence.benchmark_rule}),
    "azure_price": frozenset({Evidence.list_price}),
    "cloud_price": frozenset({Evidence.list_price}),
    "inferencex_observation": frozenset({Evidence.third_party_measured}),
    "self_observation": frozenset({Evidence.self_measured}),
}


def label_comment(labels: Iterable[str], lead: str = "Evidence label") -> str:
    """A column comment naming exactly the evidence labels the column can hold, in the
    vocabulary's order: ``Evidence label; always measured.`` for one, else ``Evidence label:
    one of a, b or c.`` (a test checks every such comment against the values present)."""
    order = list(Evidence)
    named = [e.value for e in sorted({Evidence(x) for x in labels}, key=order.index)]
    if len(named) == 1:
        return f"{lead}; always {named[0]}."
    return f"{lead}: one of {', '.join(named[:-1])} or {named[-1]}."


@cache  # a few labels, asked on every cost request
def basis(*labels: str) -> str:
    """The basis a derived row reports: ``derived: a + b`` over its distinct input labels,
    strongest first (ties in the vocabulary's order), so the weakest is always visible (e.g.
    ``derived: measured + assumption``).
    """
    order = list(Evidence)
    distinct = sorted({Evidence(x) for x in labels}, key=lambda e: (-STRENGTH[e], order.index(e)))
    return "derived: " + " + ".join(e.value for e in distinct)


# --------------------------------------------------------------------------- MLPerf


class Scenario(StrEnum):
    """MLPerf Inference scenarios, as the warehouse spells them."""

    Offline = "Offline"
    Server = "Server"
    Interactive = "Interactive"
    SingleStream = "SingleStream"
    MultiStream = "MultiStream"


SCENARIOS = tuple(s.value for s in Scenario)
THROUGHPUT_SCENARIOS = ("Offline", "Server", "Interactive")
LATENCY_SCENARIOS = ("Server", "Interactive")  # the scenarios with TTFT/TPOT limits
STREAM_SCENARIOS = ("SingleStream", "MultiStream")
DIVISIONS = ("closed", "open")
AVAILABILITY = ("available", "preview", "rdi")

TOKENS_PER_S, SAMPLES_PER_S, QUERIES_PER_S = "Tokens/s", "Samples/s", "Queries/s"
THROUGHPUT_UNITS = (TOKENS_PER_S, SAMPLES_PER_S, QUERIES_PER_S, "Tasks/s")
LATENCY_UNITS = ("Latency (ms)", "Latency (s)")
WATTS_UNIT, MILLIJOULES_UNIT = "Watts", "millijoules"
POWER_UNITS = (WATTS_UNIT, "Watts (per query)", MILLIJOULES_UNIT, "Joules")
KNOWN_UNITS = THROUGHPUT_UNITS + LATENCY_UNITS + POWER_UNITS

# The accuracy targets the MLPerf Inference rules state, as percentages of the reference model's
# accuracy (inference_rules.adoc, the benchmark tables' accuracy column: "99% of FP32 and 99.9% of
# FP32" for most; YOLO "95% of FP32 (yolo-95: ...) and 99 of FP32 (yolo-99: ...)"; E2E-RAG "97%
# of FP32"). A model id ending in -<target> names a target of its model, not another model. A
# list, not any number: mobilenet ids end in an image size (mobilenet-v1-...-1.0-224).
ACCURACY_TARGETS = ("99.9", "99", "97", "95")
_ACCURACY_SUFFIX = re.compile("-(" + "|".join(re.escape(t) for t in ACCURACY_TARGETS) + ")$")

# Spellings of one benchmark model that normalise_model makes one id. v6.0's HPE submissions
# (ProLiant DL145 Gen11 and DL380 Gen12 with RTX PRO 4500 Blackwell, results 6.0-0055 and
# 6.0-0056) publish UsedModel "resnet" where every other submitter of the benchmark (MLPerf's
# Model "resnet" for all of them) publishes "resnet50".
MODEL_SPELLINGS = {"resnet": "resnet50"}


def normalise_scenario(value: str) -> str | None:
    """``offline``, ``Single Stream`` → ``Offline``, ``SingleStream``; None when unknown."""
    key = value.strip().lower().replace(" ", "").replace("_", "")
    return next((s for s in SCENARIOS if s.lower() == key), None)


def normalise_model(model: str) -> str:
    """``llama3_1-8b`` and ``llama3.1-8b`` meet: lower case, ``_`` between digits becomes ``.``;
    a known second spelling of a model becomes its usual one (``MODEL_SPELLINGS``)."""
    model = re.sub(r"(?<=\d)_(?=\d)", ".", model.strip().lower())
    return MODEL_SPELLINGS.get(model, model)


def model_family(model_id: str) -> str:
    """The model without MLPerf's accuracy-target suffix (``ACCURACY_TARGETS``):
    ``llama2-70b-99.9`` → ``llama2-70b``, ``yolo-95`` → ``yolo``."""
    return _ACCURACY_SUFFIX.sub("", model_id)


# --------------------------------------------------------------------------- accelerators

# The datasheet figures every catalogued accelerator should carry (hardware_spec metrics), with
# the unit they are stored in and the unit they are shown in (divisor). Figures in words have
# no unit. A missing one is a listed gap, never a guess.
ACCELERATOR_FIGURES: dict[str, tuple[str | None, str | None, float]] = {
    "memory_capacity": ("B", "GB", 1e9),
    "memory_type": (None, None, 1.0),
    "memory_bandwidth": ("B/s", "TB/s", 1e12),
    "flops_fp8_dense": ("FLOP/s", "TFLOPS", 1e12),
    "flops_bf16_dense": ("FLOP/s", "TFLOPS", 1e12),
    "tdp": ("W", "W", 1.0),
    "form_factor": (None, None, 1.0),
    "launch_date": (None, None, 1.0),
}
TEXT_FIGURES = frozenset(m for m, (unit, _, _) in ACCELERATOR_FIGURES.items() if unit is None)


# --------------------------------------------------------------------------- prices

class Offer(StrEnum):
    """How a VM is bought (Azure: the price type, or Spot / Low Priority in the SKU name)."""

    on_demand = "on_demand"
    spot = "spot"
    low_priority = "low_priority"
    reservation = "reservation"
    dev_test = "dev_test"


class OperatingSystem(StrEnum):
    """The OS a VM price is for; ``unknown`` is reported and never priced unless asked for."""

    linux = "linux"
    windows = "windows"
    unknown = "unknown"


OFFERS = tuple(o.value for o in Offer)
OPERATING_SYSTEMS = tuple(o.value for o in OperatingSystem)
OFFERS_SAID = ", ".join(OFFERS[:-1]) + " or " + OFFERS[-1]  # in descriptions and comments
# Azure names a VM product's OS by its last word: "… Series Windows" and "… Srs Win" are
# Windows; a product with no OS word ("… Series", "… Srs") is Linux. Any other last word is
# os = unknown, reported by the refresh and never priced unless asked for.
AZURE_OS_TAILS = {"Windows": OperatingSystem.windows, "Win": OperatingSystem.windows,
                  "Linux": OperatingSystem.linux, "Series": OperatingSystem.linux,
                  "Srs": OperatingSystem.linux}
PRICE_TYPES = ("Consumption", "Reservation", "DevTestConsumption")
HOURLY_UNITS = ("1 Hour", "1/Hour", "1 Hours")
HOURS_IN_TERM = {"1 Year": 8760.0, "3 Years": 26280.0, "5 Years": 43800.0}
PRICE_BASES = ("list_price", "assumed")
PRICE_STATUSES = ("priced", "no price", "assumed")  # a cost row's price_status
PRICE_SOURCES = ("azure_prices", "cloud_prices")  # where a price_catalog row was read
# The SkyPilot catalog (cloud_price): the offers a catalog row carries (Price, SpotPrice), the
# placeholders it writes where a cloud publishes no price (refused, kept with the reason), how
# a (cloud, instance type) was mapped to an accelerator, and the move between two versions of
# one price past which the refresh flags it (x or 1/x).
# (low_priority: Azure _Promo sizes, which carry their base size's Low Priority price)
CATALOG_OFFERS = (Offer.on_demand.value, Offer.spot.value, Offer.low_priority.value)


class ImportOutcome(StrEnum):
    """What ``perfledger import`` did with one result file."""

    imported = "imported"    # its runs were stored
    unchanged = "unchanged"  # the same bytes, stated the same, were already stored
    refused = "refused"      # the file was refused, naming file, run and field


class Revision(StrEnum):
    """Why an earlier version of an MLPerf result is kept (``mlperf_result_revision.status``)."""

    revised = "revised"      # the round's re-published file changed its published figures
    withdrawn = "withdrawn"  # the re-published file no longer has it
    renamed = "renamed"      # a newer parser re-reading the same file gave it another id


class CatalogSentinel(StrEnum):
    """Why a catalog price was refused (``cloud_price.refused``): never a price, kept to show."""

    zero = "zero"                   # $0: an unpriced size (Azure H100 sizes, for one)
    placeholder_700 = "placeholder_700"  # GCP's 700.0 written for TPUs with no price
    gpu_only = "gpu_only"           # GCP: a GPU's own price with no host VM row to add it to


class CloudMatch(StrEnum):
    """How a catalog row's (cloud, instance type, accelerator name) met data/cloud_accelerators.yaml."""

    mapped = "mapped"        # one accelerator id (and a count)
    ambiguous = "ambiguous"  # the name fits several ids: reported, never guessed
    unmapped = "unmapped"    # no rule: reported
    none = "none"            # no accelerator (a CPU or host-only row)


CLOUD_MATCHES = tuple(m.value for m in CloudMatch)
PRICE_MOVE_FACTOR = 3.0  # a catalog price moving more than 3x (or to under 1/3) is flagged
AZURE_CROSSCHECK_TOLERANCE = 0.01  # catalog vs Azure API, same SKU/region/Linux on demand: 1 %
ASSUMED_RATES = (5.0, 10.0, 15.0)  # USD per accelerator-hour when the caller names none


def sql_text(text: str) -> str:
    """A SQL string literal of a fixed text of this code's (for view and rule SQL; never for
    user input, which is always a bound parameter)."""
    return "'" + text.replace("'", "''") + "'"


def sql_list(values: Iterable[str]) -> str:
    """A SQL list literal of fixed vocabulary terms, e.g. ``('Offline', 'Server')``."""
    return "(" + ", ".join(sql_text(v) for v in values) + ")"


# --------------------------------------------------------------------------- InferenceX

INFERENCEX_MEASURER = "SemiAnalysis InferenceX"
# What SemiAnalysis asks of derivative work (the preamble of every CSV its dashboard exports).
INFERENCEX_ATTRIBUTION = ("Data from InferenceX (https://github.com/SemiAnalysisAI/InferenceX), "
                          "Apache License 2.0, SemiAnalysis LLC")
# MLCommons' results guidelines: a figure computed from MLPerf results must say it is derived
# and not verified by MLCommons.
MLPERF_DERIVED_NOTICE = ("Derived from MLPerf Inference results by perfledger; not verified by "
                         "MLCommons Association. MLPerf is a trademark of MLCommons Association.")
# A view that places MLPerf results beside non-MLPerf ones says so, with the method.
MLPERF_COMBINED_NOTICE = (
    "Combines MLPerf Inference results (MLCommons; kind mlperf: result / accelerators at the "
    "rules' per-user floor 1000 / p99 TPOT limit, Offline at 0; each cited by round, division, "
    "availability and result ID or citation) with non-MLPerf results (SemiAnalysis InferenceX "
    "observations, third-party measured: median interactivity, output tokens/s per every GPU). "
    "The non-MLPerf results were not verified by MLCommons Association and were not run under "
    "MLPerf's rules. MLPerf is a trademark of MLCommons Association.")
MLPERF_DATASET_NOTE = ("MLPerf runs its own dataset (lengths vary per sample), not the fixed "
                       "input/output lengths of this chart: placed for reference, not matched.")


class PowerStatus(StrEnum):
    """What an InferenceX row's power figures are worth (its ``metrics.power_valid`` and
    ``metrics.power_metric_schema_version``)."""

    valid = "valid"                      # power_valid == 1 and schema version 2: usable
    unsupported_schema = "unsupported_schema"  # power_valid == 1, another schema version
    invalid = "invalid"                  # power_valid == 0: the publisher withheld it
    legacy_unverified = "legacy_unverified"  # power figures without a validity verdict
    none = "none"                        # no power figures at all


POWER_STATUSES = tuple(s.value for s in PowerStatus)
VALID_POWER_SCHEMA = 2

# What an energy figure measures; the two are not comparable and are always labelled.
ENERGY_SCOPE_GPU = "InferenceX: GPU board power only (whole-deployment GPU energy per output token)"
ENERGY_SCOPE_WALL = "MLPerf: whole-system wall power (not comparable with GPU-only power)"

# Claim metrics that state a per-user output speed (tokens/s per user): the ones an InferenceX
# interactivity can be compared with.
PER_USER_SPEED_METRICS = ("output_tokens_per_s_per_user", "output_tokens_per_s")


# Characters that change how a name looks, or which name it seems to be, without being part of
# it: zero-width spaces and joiners, word joiner, BOM, soft hyphen, and the bidirectional
# controls (marks, embeddings, overrides, isolates). "NVIDIA" with a zero-width space made a
# second organization that filters missed.
INVISIBLE = dict.fromkeys(map(ord, "\u00ad\u200b\u200c\u200d\u2060\ufeff\u200e\u200f"
                                   "\u061c\u202a\u202b\u202c\u202d\u202e\u2066\u2067"
                                   "\u2068\u2069"))


def identity_text(text: str) -> str:
    """A name as it is compared, keyed and filtered: Unicode NFKC (fullwidth and compatibility
    forms to their plain letters), ``INVISIBLE`` characters removed, ends stripped. Parsers keep
    the original beside it where it differs."""
    return unicodedata.normalize("NFKC", text).translate(INVISIBLE).strip()


# --------------------------------------------------------------------------- refresh states


class SourceStatus(StrEnum):
    """What one refresh did with one source (the run record's ``status`` per source)."""

    pending = "pending"      # while loading
    updated = "updated"      # rows written
    unchanged = "unchanged"  # read; nothing new to write
    partial = "partial"      # some parts (rounds, models) failed; each keeps its last good rows
    failed = "failed"        # the source failed; its last good rows are kept
    disabled = "disabled"    # switched off (``enabled = false``): neither failed nor stale


# Statuses (plain strings from a run record compare equal too) in which a source was read,
# wholly or in part (a success for its freshness), and in which it or some part did not load.
LOADED = (SourceStatus.updated, SourceStatus.unchanged, SourceStatus.partial)
FELL_SHORT = (SourceStatus.failed, SourceStatus.partial)


# A source or part that did not load, as the operator reads it: in a summary line, in the run's
# message, and for one part (round, model), by whether it has last good rows to keep.
FAILED_LINE = {True: "failed, last good data kept", False: "failed, never loaded"}
FAILED_MESSAGE = {True: "failed, kept its last good data", False: "failed and has never loaded"}
PARTLY_FAILED = "partly failed"
PART_FAILED = {True: "kept its last good rows", False: "has never loaded"}
DISABLED_MESSAGE = "enabled = false in the sources file"  # a switched-off source's message


class RunStatus(StrEnum):
    """How one refresh ended (``running`` until it does)."""

    running = "running"
    published = "published"      # a new snapshot, every source loaded
    partial = "partial"          # a new snapshot; some sources failed and kept their rows
    unchanged = "unchanged"      # no source changed: nothing published
    failed = "failed"            # sources failed and none changed, or the run itself failed
    rejected = "rejected"        # validation reported an error: nothing published
    interrupted = "interrupted"  # the process died; marked by the next refresh


RUN_OK = (RunStatus.published, RunStatus.unchanged)  # exit code 0
PUBLISHED = (RunStatus.published, RunStatus.partial)  # a snapshot was published


class SourceState(StrEnum):
    """A source's freshness in one word (``/healthz``)."""

    fresh = "fresh"
    stale = "stale"                # it failed or partly failed; its last good data is served
    never_loaded = "never_loaded"  # it failed and no attempt ever succeeded: nothing to keep
    disabled = "disabled"          # switched off: neither failed nor stale
