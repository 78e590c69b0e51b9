"""The warehouse schema, declared once with SQLModel.

Each table's DDL is compiled from these classes for DuckDB (``create_all``); the API's response
models derive from the same base classes. Every column carries a description that becomes its
``COMMENT ON`` text, so an analyst's ``DESCRIBE``/``duckdb_columns()`` explains it.
Timestamps are UTC (``TIMESTAMP WITH TIME ZONE``). Keys are natural or content-derived
(duckdb-engine cannot create autoincrement keys).
"""

from __future__ import annotations

from datetime import date, datetime

import duckdb
from sqlalchemy import Double
from sqlalchemy.schema import CreateTable
from sqlmodel import Field, SQLModel

from warehouse.model.vocabulary import CLAIM_LABELS, OFFERS_SAID, TABLE_LABELS, label_comment


def F(description: str, **kw):  # noqa: N802 - a short field constructor reads like a column list
    """A column with its documentation (becomes COMMENT ON COLUMN)."""
    return Field(description=description, **kw)


def Num(description: str, **kw):  # noqa: N802
    """A DOUBLE column (SQLAlchemy's Float compiles to 32-bit FLOAT in DuckDB)."""
    return Field(description=description, sa_type=Double, **kw)


# --------------------------------------------------------------------------- provenance

class SourceSnapshotBase(SQLModel):
    id: str = F("Content-derived id of this fetched body (source, URL, sha256).", primary_key=True)
    source: str = F("Source name from sources.toml: mlperf, mlperf_rules, azure_prices, curated.")
    kind: str = F("What the bytes are: mlperf_summary, rules_document, azure_page, curated_file.")
    label: str | None = F("Round (MLPerf), page number (Azure) or file name (curated).")
    url: str = F("Where the bytes came from (URL or file path), credentials removed.")
    fetched_at: datetime = F("When these bytes were last fetched and loaded (UTC); bytes "
                             "seen before and fetched again move it.")
    sha256: str = F("sha256 of the raw bytes; the raw store keeps them under this name.")
    byte_size: int = F("Size of the raw bytes.")
    etag: str | None = F("HTTP ETag sent with the bytes, for conditional requests.")
    last_modified: str | None = F("HTTP Last-Modified sent with the bytes.")
    parser_version: str = F("Version of the parser that read the bytes.")
    raw_path: str = F("Path of the raw bytes, relative to the data directory.")


class SourceSnapshot(SourceSnapshotBase, table=True):
    """Every body fetched from a source: the exact bytes every fact row was parsed from."""

    __tablename__ = "source_snapshot"


class SourceStateBase(SQLModel):
    source: str = F("Source name from sources.toml.", primary_key=True)
    digest: str = F("sha256 over the parser version and the sha256 of every body, in order, "
                    "that the source's current rows were built from.")
    parts: int = F("How many bodies (e.g. Azure pages) went into the digest.")
    loaded_at: datetime = F("When those rows were built (UTC).")


class SourceState(SourceStateBase, table=True):
    """What each multi-page source's rows were last built from: a refresh that fetches the same
    bytes again skips parsing them."""

    __tablename__ = "source_state"


class RefreshRunBase(SQLModel):
    id: str = F("Refresh run id (UTC start time and a random suffix).", primary_key=True)
    started_at: datetime = F("When the refresh started (UTC).")
    finished_at: datetime | None = F("When it finished (UTC).")
    status: str = F("published, unchanged, failed, rejected or partial.")
    snapshot_id: str | None = F("The snapshot this run published, if any.")
    outcome: str = F("JSON: per-source status, rows, bytes, duration, message.")
    message: str = F("One-line summary a person can act on.")


class RefreshRun(RefreshRunBase, table=True):
    """Refresh history up to the run that published this snapshot."""

    __tablename__ = "refresh_run"


class ValidationResultBase(SQLModel):
    id: str = F("Run id and expectation name.", primary_key=True)
    run_id: str = F("Refresh run (or validate call) that produced the result.")
    suite: str = F("Suite (table family) the expectation belongs to.")
    expectation: str = F("Name of the rule, readable on its own.")
    table_name: str = F("Table checked.")
    severity: str = F("error (blocks publishing) or warning (published and reported).")
    success: bool = F("Whether the rule held.")
    unexpected_count: int | None = F("Rows breaking the rule.")
    sample: str | None = F("JSON sample of offending rows (key and value).")
    rows_checked: int | None = F("Rows in the table when checked: 0 means the rule checked "
                                 "nothing ('no rows'), not that it held.")


class ValidationResult(ValidationResultBase, table=True):
    """Validation outcome of the run that published this snapshot."""

    __tablename__ = "validation_result"


# --------------------------------------------------------------------------- MLPerf

class MlperfResultBase(SQLModel):
    id: str = F("Stable id: hash of the natural key.", primary_key=True)
    round: str = F("MLPerf round, e.g. v6.1 (the file's version column or key).")
    organization: str = F("Submitting organization, as published.")
    availability: str = F("available, preview or rdi (research/development/internal).")
    division: str = F("closed or open.")
    system_type: str | None = F("datacenter or edge (CSV SystemType, JSON Suite).")
    system_name: str = F("System name, as published (CSV SystemName, JSON System).")
    platform: str = F("Platform id, as published; part of the natural key.")
    model: str = F("Model as submitted (CSV Model, JSON UsedModel), e.g. llama3_1-8b; in the open division many submitted variants share one official model.")
    mlperf_model: str | None = F("Official MLPerf benchmark model (CSV MlperfModel, JSON Model).")
    model_id: str = F("Normalised submitted model: llama3_1-8b and llama3.1-8b both become llama3.1-8b; part of the natural key.")
    model_family: str = F("Model id without the accuracy-target suffix (llama2-70b-99.9 -> llama2-70b); joins benchmark_rule.")
    scenario: str = F("Normalised scenario: Offline, Server, Interactive, SingleStream, MultiStream.")
    scenario_raw: str = F("Scenario as published (CSV Scenario), e.g. offline.")
    result: float = Num("The published result, in `units`.")
    units: str = F("Unit of `result`: Tokens/s, Samples/s, Queries/s, Latency (ms), ... ; Watts/millijoules on power rows.")
    is_power: bool = F("True for power rows (Watts/millijoules), which share the performance row's key but for units (the CSV publishes them as rows; a JSON record's Power_Result becomes one).")
    accuracy: str | None = F("Accuracy string as published.")
    number_of_nodes: int | None = F("Nodes in the system.")
    host_processor_model_name: str | None = F("Host CPU model.")
    host_processors_per_node: int | None = F("Host CPUs per node.")
    host_processor_core_count: str | None = F("Cores per host CPU, as published (free text in v6.1, e.g. '64(AMD EPYC 9534) and 192(AMD EPYC 9965)').")
    accelerator_model_name: str | None = F("Accelerator as published, e.g. Nvidia B300-SXM-270GB.")
    accelerator_id: str | None = F("Normalised accelerator id from data/accelerators.yaml (a curated spelling, or the one id whose identity the name's identity fits: see accelerator_match); NULL when none, mixed, unmapped or ambiguous. Set at every refresh from the curated file, so a new alias re-maps loaded rows.")
    accelerator_match: str | None = F("How accelerator_id was found: alias (a curated spelling, exactly), identity (the name's identity - vendor, product, form factor, memory, decorations set aside - fits one id's spellings), ambiguous (it fits several: accelerator_candidates) or unmapped (it fits none); NULL for rows with no single accelerator.")
    accelerator_identity: str | None = F("The accelerator name's identity as read: vendor product | form factor | memory (e.g. NVIDIA h200 | SXM | 141GB); '-' where the name does not say.")
    accelerator_candidates: str | None = F("Ambiguous names only: the ids the identity fits, comma-separated (never guessed between).")
    accelerator_power_cap_w: int | None = F("Power cap written in the accelerator name, in W (e.g. '(Power Cap 1000 W)').")
    accelerator_power_w: int | None = F("Power figure written in the accelerator name without saying what it is (e.g. '-750W'), in W.")
    accelerator_partition_mode: str | None = F("GPU partition and memory (NPS) modes written in the accelerator name, e.g. NPS1-SPX.")
    accelerator_cooling: str | None = F("Cooling or thermal variant written in the accelerator name, e.g. CTS, liquid-cooled.")
    accelerator_virtualized: bool | None = F("True when the accelerator name says it ran virtualized.")
    accelerator_instances: str | None = F("Count or instance marker written in the accelerator name, e.g. x87, 2 instances.")
    accelerator_decorations: str | None = F("Every decoration of the accelerator name in words (the columns above plus reseller and part prefixes, registered marks, filler words, MaxQ/MaxP), '; '-separated; NULL when the name has none.")
    accelerator_vendor: str | None = F("Normalised accelerator vendor (NVIDIA, AMD, Intel, ...).")
    accelerator_mix: str = F("single, mixed (several accelerator kinds) or none (N/A).")
    accelerators_per_node: int | None = F("Accelerators per node.")
    total_accelerators: int | None = F("Accelerators in the whole system: as published, or number_of_nodes x accelerators_per_node where the file has no such column; NULL for systems with no accelerator.")
    total_accelerators_basis: str | None = F("published, computed (nodes x accelerators per node), none (no accelerator) or unknown.")
    location: str | None = F("Path of the result in the round's results repository, as published (CSV Location, JSON Location).")
    framework: str | None = F("Software stack, as published.")
    operating_system: str | None = F("Operating system, as published.")
    notes: str | None = F("Submitter notes.")
    compliance: str | None = F("Compliance division as published.")
    errors: int | None = F("Error count as published.")
    version: str = F("Round as published (CSV version).")
    inferred: bool | None = F("CSV 'inferred' flag as published. The MLCommons exporter compares scenarios case-sensitively and marks every datacenter Interactive row inferred; do not use it to drop rows.")
    has_power: bool | None = F("CSV has_power flag.")
    weight_data_types: str | None = F("Weight precisions, as published (free text).")
    design_power_watts: float | None = Num("Design power, where published.")
    private_id: str | None = F("CSV PrivateID.")
    system_id: str | None = F("MLPerf result ID as MLCommons publishes it, to cite with the figure (JSON ID, e.g. 5.1-0001; one ID per submitted system, shared by its benchmarks); NULL for summary.csv rows, which publish none.")
    details_url: str | None = F("Link to the result's details: JSON Details as published (the system's results directory); for a row whose file publishes none (summary.csv), the row's Location directory in the round's results repository at the commit the file is known to be from (the built-in mirror's copy with the same sha256, or a raw.githubusercontent.com URL pinned to a commit); NULL when that commit is not known.")
    code_url: str | None = F("Link to the submission's code (JSON Code).")
    extras: str | None = F("JSON object of columns or keys this parser does not know (kept, not dropped); under original the published spelling of a name stored without its zero-width or bidi characters or compatibility forms (NFKC); under units_as_published and units_corrected_by the unit the file wrote where the publisher's own checker says another (ingest/mlperf/units.py).")
    row_number: int = F("Line of the row in the CSV (header = 1), or index of the record in the JSON list (0-based).")
    source_format: str | None = F("csv (summary.csv) or json (summary_results.json).")
    evidence: str = F(label_comment(TABLE_LABELS["mlperf_result"]))
    source_snapshot_id: str = F("source_snapshot.id of the CSV the row was parsed from.")


class MlperfResult(MlperfResultBase, table=True):
    """MLPerf Inference results: every row and column of each round's summary (CSV or JSON)."""

    __tablename__ = "mlperf_result"


class MlperfRevisionBase(SQLModel):
    id: str = F("Result id and the fetch time of the file that replaced the version.", primary_key=True)
    result_id: str = F("The result's stable id (mlperf_result.id).")
    round: str = F("MLPerf round of the result.")
    status: str = F("revised (the round's re-published file changed its published figures), withdrawn (the re-published file no longer has it) or renamed (a newer parser re-reading the same file gave the result another id: renamed_to).")
    valid_from: datetime | None = F("When the replaced version's file was fetched (UTC).")
    valid_to: datetime = F("When the file that replaced or withdrew it was fetched (UTC).")
    result: float = Num("The result in that version, in `units`.")
    units: str = F("Unit of `result`.")
    evidence: str = F(label_comment(TABLE_LABELS["mlperf_result_revision"]))
    version: str = F("JSON of the whole result row as it was.")
    source_snapshot_id: str = F("source_snapshot.id of the file bytes the version came from.")
    renamed_to: str | None = F("For a renamed result, the id it has now (the same row of the same file, matched by round, row_number and is_power); /v1/results/{result_id} redirects there.")


class MlperfRevision(MlperfRevisionBase, table=True):
    """Earlier versions of MLPerf results a re-published round revised, and results it withdrew, kept with their dates; a parser change re-reading the same bytes revises nothing, but a result it gives another id keeps its old one, pointing at the new."""

    __tablename__ = "mlperf_result_revision"


# --------------------------------------------------------------------------- curated

class ClaimBase(SQLModel):
    id: str = F("Stable id from the curated file.", primary_key=True)
    vendor: str = F("Who makes the claim (or whose product it is about).")
    product: str | None = F("Product or system the figure is about.")
    model: str | None = F("Model the figure is about, where it applies.")
    model_family: str | None = F("That model without an accuracy-target suffix (normalised), so a model filter can take a family.")
    metric: str = F("What is measured or claimed, e.g. output_tokens_per_s_per_user.")
    value: float = Num("The figure.")
    unit: str = F("Unit of value.")
    evidence: str = F(label_comment(TABLE_LABELS["claim"]))
    claimed_on: date | None = F("Date the vendor or author said it.")
    checked_on: date = F("Date the figure was last verified at its source.")
    source_title: str = F("Title of the source.")
    source_url: str = F("URL of the source.")
    quote: str | None = F("Quoted wording from the source.")
    conditions: str | None = F("JSON object of the stated conditions (precision, batch, projected...).")
    accelerator_id: str | None = F("Accelerator the figure concerns, if one.")
    note: str | None = F("Reviewer's note, e.g. what the source does not say.")
    recompute_numerator: str | None = F("hardware_spec.id whose value, divided by recompute_denominator's, recomputes the claim from specs.")
    recompute_denominator: str | None = F("hardware_spec.id of the denominator (see recompute_numerator).")
    file: str = F("Curated file the entry came from.")
    source_snapshot_id: str = F("source_snapshot.id of that file's bytes.")


class Claim(ClaimBase, table=True):
    """Dated vendor claims, projections, vendor and third-party measurements, paper results."""

    __tablename__ = "claim"


class ClaimHistoryBase(SQLModel):
    id: str = F("Claim id and the time the version was replaced.", primary_key=True)
    claim_id: str = F("The claim's stable id.")
    status: str = F("edited (a newer version replaced it) or withdrawn (removed from the file).")
    valid_from: datetime | None = F("When the replaced version's file was fetched (UTC).")
    valid_to: datetime = F("When the refresh that replaced or withdrew it ran (UTC).")
    value: float = Num("The claim's figure in that version.")
    evidence: str = F(label_comment(CLAIM_LABELS, "The version's evidence label"))
    claimed_on: date | None = F("The version's claim date.")
    checked_on: date = F("The version's check date.")
    version: str = F("JSON of the whole claim row as it was.")
    source_snapshot_id: str = F("source_snapshot.id of the file bytes the version came from.")


class ClaimHistory(ClaimHistoryBase, table=True):
    """Earlier versions of edited claims and withdrawn claims, kept with their dates."""

    __tablename__ = "claim_history"


class HardwareSpecBase(SQLModel):
    id: str = F("Stable id: hardware id and metric.", primary_key=True)
    hardware_id: str = F("Hardware (accelerator or system) id.")
    metric: str = F("memory_bandwidth, memory_capacity, flops_fp8_dense, flops_bf16_dense, tdp, sram_capacity, ... (numbers); memory_type, form_factor, launch_date (words, in value_text).")
    value: float | None = Num("The figure, in SI base units (bytes, bytes/s, FLOP/s, W); NULL for a figure given in words (value_text).")
    value_text: str | None = F("The figure in words, for memory_type, form_factor and launch_date.")
    unit: str | None = F("Unit of value (NULL for a figure in words).")
    evidence: str = F(label_comment(TABLE_LABELS["hardware_spec"]))
    checked_on: date = F("Date the figure was checked at its source.")
    source_title: str = F("Title of the source.")
    source_url: str = F("URL of the source.")
    quote: str | None = F("Quoted wording, where quoted.")
    cited_via: str | None = F("Set when source_url is a secondary page reproducing the vendor's figure (a retailer's copy of the datasheet, a re-hosted product brief): the page read, not the vendor's own.")
    vendor_url: str | None = F("The vendor's own page for the figure, when known (NULL where only cited_via was reachable).")
    note: str | None = F("How the figure was obtained (e.g. dense = sparse / 2).")
    file: str = F("Curated file the entry came from.")
    source_snapshot_id: str = F("source_snapshot.id of that file's bytes.")


class HardwareSpec(HardwareSpecBase, table=True):
    """Hardware peak figures per accelerator or system (long format: one metric a row)."""

    __tablename__ = "hardware_spec"


class HardwareBase(SQLModel):
    id: str = F("Hardware id.", primary_key=True)
    name: str = F("Display name.")
    vendor: str = F("Vendor.")
    kind: str = F("accelerator, system (several accelerators) or rack.")
    accelerator_id: str | None = F("Accelerator a system is built from.")
    accelerator_count: int | None = F("Accelerators in the system.")
    file: str = F("Curated file the entry came from.")
    source_snapshot_id: str = F("source_snapshot.id of that file's bytes.")


class Hardware(HardwareBase, table=True):
    """Accelerators and systems the specs describe."""

    __tablename__ = "hardware"


class ModelShapeBase(SQLModel):
    id: str = F("Model id.", primary_key=True)
    name: str = F("Display name.")
    illustrative: bool = F("True for the article's illustrative shapes (not real models).")
    params: float | None = Num("Total parameters.")
    active_params: float | None = Num("Parameters read per token (MoE: active experts).")
    layers: int | None = F("Transformer layers.")
    kv_heads: int | None = F("KV heads (grouped-query attention).")
    head_dim: int | None = F("Head dimension.")
    evidence: str = F(label_comment(TABLE_LABELS["model_shape"]) + " Real models' shapes are "
                      "published figures, illustrative shapes the docs' choice.")
    checked_on: date = F("Date checked at the source.")
    source_title: str = F("Source title.")
    source_url: str = F("Source URL.")
    note: str | None = F("What is unknown or approximate.")
    file: str = F("Curated file the entry came from.")
    source_snapshot_id: str = F("source_snapshot.id of that file's bytes.")


class ModelShape(ModelShapeBase, table=True):
    """Model shapes for the bound calculators."""

    __tablename__ = "model_shape"


class AcceleratorAliasBase(SQLModel):
    alias: str = F("A spelling seen in a source (MLPerf accelerator name, Azure SKU) or the id itself.", primary_key=True)
    accelerator_id: str | None = F("Accelerator id; NULL for none or mixed.")
    vendor: str | None = F("Accelerator vendor.")
    mix: str = F("single, mixed or none.")
    count: int | None = F("Accelerators per unit: per Azure VM size (kind azure_sku); GPUs in one unit of the accelerator as MLPerf counts it (kind id: 2 for a dual-GPU board, NULL for one GPU); NULL for MLPerf names.")
    kind: str = F("mlperf_name, azure_sku, or id (every accelerator id is an alias of itself).")
    name: str | None = F("Display name of the accelerator (kind id rows).")
    note: str | None = F("Reviewer's note on the accelerator or its spellings (kind id rows).")
    file: str = F("Curated file the alias came from.")
    source_snapshot_id: str = F("source_snapshot.id of that file's bytes.")


class AcceleratorAlias(AcceleratorAliasBase, table=True):
    """Spellings of accelerators in sources, mapped to one id (and a count for cloud SKUs)."""

    __tablename__ = "accelerator_alias"


class BenchmarkRuleBase(SQLModel):
    id: str = F("Document sha256 prefix, model, category.", primary_key=True)
    model_family: str = F("Benchmark model, e.g. llama2-70b.")
    category: str = F("Latency category as the rules name it: Conversational/Server, Interactive.")
    scenario: str = F("Scenario the limits apply to: Server or Interactive.")
    ttft_ms: float = Num("p99 time-to-first-token limit in milliseconds.")
    tpot_ms: float = Num("p99 time-per-output-token limit in milliseconds.")
    reference_tokens: float | None = Num("Reference output tokens per sample, where the rules give it.")
    speculative_decoding: str | None = F("Speculative decoding allowance, where the rules state one.")
    line_number: int = F("Line of the rules document the limits were read from.")
    quote: str = F("The rules text the limits were read from.")
    evidence: str = F(label_comment(TABLE_LABELS["benchmark_rule"]))
    source_snapshot_id: str = F("source_snapshot.id of the rules document.")


class BenchmarkRule(BenchmarkRuleBase, table=True):
    """TTFT/TPOT latency limits per LLM benchmark, parsed from the MLPerf rules document."""

    __tablename__ = "benchmark_rule"


class RulePinBase(SQLModel):
    round: str = F("MLPerf round.", primary_key=True)
    sha256: str = F("sha256 of the rules document this round's results are compared with.")


class RulePin(RulePinBase, table=True):
    """Rounds pinned to a rules document (sources.toml [mlperf_rules].round_pins); other rounds
    use the latest document."""

    __tablename__ = "rule_pin"


# --------------------------------------------------------------------------- prices

class AzurePriceBase(SQLModel):
    id: str = F("Version id: hash of price key, price and effective start.", primary_key=True)
    price_key: str = F("Hash of (meterId, skuId, armRegionName, type, reservationTerm, tierMinimumUnits, currency).")
    meter_id: str = F("Azure meterId.")
    sku_id: str = F("Azure skuId.")
    arm_sku_name: str = F("VM size, e.g. Standard_ND96isr_H100_v5.")
    arm_region_name: str = F("Region, e.g. eastus2.")
    location: str | None = F("Region display name.")
    price_type: str = F("Consumption, Reservation or DevTestConsumption (Azure type).")
    reservation_term: str | None = F("1 Year / 3 Years / 5 Years for reservations.")
    tier_minimum_units: float = Num("Tier minimum units.")
    currency: str = F("Currency code.")
    retail_price: float = Num("Retail price as published (for reservations: the whole term).")
    unit_price: float = Num("Unit price as published.")
    unit_of_measure: str = F("Unit of measure, e.g. 1 Hour.")
    hourly_price: float | None = Num("Price per hour (reservations: term price / hours in term).")
    os: str = F("linux or windows (Windows when the product name ends in Windows).")
    offer: str = F(f"{OFFERS_SAID}.")
    savings_plan: str | None = F("JSON list of savings-plan rates as published.")
    meter_name: str | None = F("Azure meterName.")
    product_name: str | None = F("Azure productName.")
    sku_name: str | None = F("Azure skuName.")
    service_name: str | None = F("Azure serviceName.")
    effective_start: datetime = F("Azure effectiveStartDate.")
    valid_from: datetime = F("When this version was first observed at this price.")
    valid_to: datetime | None = F("When a newer version replaced it (NULL: current).")
    first_seen_at: datetime = F("First fetch that saw this version.")
    last_seen_at: datetime = F("Latest fetch that saw this version.")
    listed: bool = F("False once the item disappeared from the price list (kept, never deleted).")
    evidence: str = F(label_comment(TABLE_LABELS["azure_price"]))
    source_snapshot_id: str = F("source_snapshot.id of the page this version was first read from.")


class AzurePrice(AzurePriceBase, table=True):
    """Azure Retail Prices for GPU VMs, versioned: a change closes the old row and opens a new one."""

    __tablename__ = "azure_price"


class CloudPriceBase(SQLModel):
    id: str = F("Version id: hash of the row's content (price key, price, commit) and how many versions its key had before.", primary_key=True)
    price_key: str = F("Hash of (cloud, instance type, accelerator name, region, zone, offer): one price across versions.")
    cloud: str = F("Provider as the SkyPilot catalog names it (aws, azure, gcp, lambda, runpod, vast...).")
    instance_type: str = F("Instance type; for a GCP GPU billed apart from its host, the host type it was summed with.")
    accelerator_name: str | None = F("AcceleratorName as the catalog writes it (H100, A100-80GB, tpu-v6e-8); NULL for CPU rows.")
    catalog_count: float | None = F("AcceleratorCount as the catalog writes it (may be wrong or missing: see accelerators).")
    accelerator_id: str | None = F("Accelerator id of data/accelerators.yaml (data/cloud_accelerators.yaml rules); NULL unless mapped.")
    accelerators: float | None = F("Accelerators one instance rents: the rule's count where it gives one, else the catalog's.")
    accelerator_match: str = F("mapped, ambiguous, unmapped or none (no accelerator).")
    accelerator_candidates: str | None = F("Ids an ambiguous name fits, comma-separated.")
    vcpus: float | None = Num("vCPUs.")
    memory_gib: float | None = Num("Memory in GiB.")
    region: str = F("Region as the catalog writes it.")
    zone: str | None = F("Availability zone (NULL where the catalog has none).")
    offer: str = F("on_demand (Price) or spot (SpotPrice).")
    hourly_price: float | None = Num("USD per instance-hour; NULL when refused.")
    published_price: float | None = Num("The price the catalog writes (GCP host+GPU: their sum).")
    gpu_part: float | None = Num("GCP: the GPU row's price summed into this host's price; NULL elsewhere.")
    refused: str | None = F("Why the published price is not a price: zero, placeholder_700 or gpu_only; NULL when priced.")
    catalog_commit: str = F("skypilot-catalog commit (40 hex) the file was read at.")
    catalog_line: int = F("Line of the CSV the row was read from (1 = header).")
    valid_from: datetime = F("When this version was first observed (a backfill: the commit's date).")
    valid_to: datetime | None = F("When a newer version replaced it (NULL: current).")
    first_seen_at: datetime = F("First fetch that saw this version.")
    last_seen_at: datetime = F("Latest fetch that saw this version.")
    listed: bool = F("False once the row disappeared from its cloud's catalog (kept, never deleted).")
    evidence: str = F(label_comment(TABLE_LABELS["cloud_price"]))
    source_snapshot_id: str = F("source_snapshot.id of the CSV this version was first read from.")


class CloudPrice(CloudPriceBase, table=True):
    """GPU and TPU list prices of every cloud the SkyPilot catalog carries, versioned like azure_price."""

    __tablename__ = "cloud_price"


# --------------------------------------------------------------------------- InferenceX

class InferencexObservationBase(SQLModel):
    id: str = F("Version id: the observation key for the first version seen, the key and ~ and how many versions the key had before for a later revision (ix:440994~1; revisions stored before ids carried that ordinal keep the first 12 hex digits of their content's sha256 after the ~). A refresh never rewrites a version's figures: a changed upstream row closes its version (valid_to) and adds a new one.", primary_key=True)
    observation_key: str | None = F("Stable id of the upstream row across its versions: ix: and InferenceX's own benchmark_results id where the row has one, else ix:h: and a hash of the row's configuration, concurrency, date and run URL.")
    content_sha256: str | None = F("sha256 of the upstream row as published (canonical JSON, keys sorted): a new value means a revision.")
    valid_from: datetime | None = F("When a refresh first fetched this version (UTC).")
    valid_to: datetime | None = F("When a refresh fetched a revision of the row that replaced this version (NULL: current).")
    withdrawn_at: datetime | None = F("When the response that used to list the row (same request, same configuration and date) first no longer did; the row is kept, never deleted. NULL: still listed or superseded by a newer run.")
    upstream_id: str | None = F("InferenceX's benchmark_results id (JSON id, a string of digits), where published.")
    model: str = F("InferenceX raw model key, e.g. dsr1, gptoss120b (not the display name).")
    model_display: str | None = F("The InferenceX display model name the row was requested under (/api/v1/benchmarks?model=).")
    hardware: str = F("InferenceX hardware key as published, e.g. b200, gb200, mi355x (suffixes kept).")
    hardware_base: str = F("The hardware key before its first _ or - (what data/inferencex.yaml maps).")
    framework: str = F("Serving framework key, e.g. sglang, trt, vllm, dynamo-trt.")
    precision: str = F("Recipe precision: fp4, fp8, bf16, int4.")
    spec_method: str | None = F("Speculative decoding: none or mtp.")
    disagg: bool | None = F("Prefill and decode disaggregated.")
    is_multinode: bool | None = F("The deployment spans more than one node.")
    prefill_tp: int | None = F("Tensor-parallel degree of the prefill role (mirrors decode on aggregated serving).")
    prefill_ep: int | None = F("Expert-parallel degree of the prefill role.")
    prefill_dp_attention: bool | None = F("Data-parallel attention in prefill.")
    prefill_num_workers: int | None = F("Prefill workers (0 on aggregated serving).")
    decode_tp: int | None = F("Tensor-parallel degree of the decode role.")
    decode_ep: int | None = F("Expert-parallel degree of the decode role.")
    decode_dp_attention: bool | None = F("Data-parallel attention in decode.")
    decode_num_workers: int | None = F("Decode workers (0 on aggregated serving).")
    num_prefill_gpu: int | None = F("Prefill GPU count as InferenceX publishes it, not a count of GPUs on every row: the prefill GPUs of a disaggregated row (some mirror one total in both counts: the view observation solves their split) and every GPU of a multinode aggregated one; on an aggregated one-node row TP x EP, mirrored in num_decode_gpu (a B200 TP8 EP8 row says 64 on 8 GPUs). The view observation counts the GPUs (gpus, gpu_count_basis).")
    num_decode_gpu: int | None = F("Decode GPU count as InferenceX publishes it, not a count of GPUs on every row: the decode GPUs of a disaggregated row, 0 on a multinode aggregated one; on an aggregated one-node row TP x EP, mirroring num_prefill_gpu (a B200 TP8 EP8 row says 64 on 8 GPUs). The view observation counts the GPUs (gpus, gpu_count_basis).")
    pp: int | None = F("Pipeline-parallel degree (metrics.pp), where published.")
    pcp_size: int | None = F("Prefill context-parallel size (metrics.pcp_size), where published.")
    dcp_size: int | None = F("Decode context-parallel size (metrics.dcp_size), where published; shares the TP GPUs, so it does not add GPUs.")
    benchmark_type: str | None = F("single_turn or agentic_traces (absent before mid-2026: NULL).")
    isl: int | None = F("Input sequence length in tokens (NULL for agentic traces).")
    osl: int | None = F("Output sequence length in tokens (NULL for agentic traces).")
    conc: int = F("Client concurrency of this sweep point (simultaneous requests).")
    offload_mode: str | None = F("KV-cache offload mode, e.g. off.")
    image: str | None = F("Container image of the serving engine.")
    recipe_fingerprint: str | None = F("sha256 of the recipe, where published.")
    ttft_median_s: float | None = Num("Median time to first token, seconds (metrics.median_ttft).")
    ttft_p90_s: float | None = Num("p90 time to first token, seconds.")
    ttft_p99_s: float | None = Num("p99 time to first token, seconds.")
    ttft_p999_s: float | None = Num("p99.9 time to first token, seconds.")
    tpot_median_s: float | None = Num("Median time per output token, seconds (metrics.median_tpot).")
    tpot_p90_s: float | None = Num("p90 time per output token, seconds.")
    tpot_p99_s: float | None = Num("p99 time per output token, seconds.")
    tpot_p999_s: float | None = Num("p99.9 time per output token, seconds.")
    itl_median_s: float | None = Num("Median inter-token latency, seconds.")
    itl_p90_s: float | None = Num("p90 inter-token latency, seconds.")
    itl_p99_s: float | None = Num("p99 inter-token latency, seconds.")
    itl_p999_s: float | None = Num("p99.9 inter-token latency, seconds.")
    e2el_median_s: float | None = Num("Median end-to-end request latency, seconds.")
    e2el_p90_s: float | None = Num("p90 end-to-end latency, seconds.")
    e2el_p99_s: float | None = Num("p99 end-to-end latency, seconds.")
    e2el_p999_s: float | None = Num("p99.9 end-to-end latency, seconds.")
    interactivity: float | None = Num("Interactivity: median output tokens/s per user (metrics.median_intvty), the frontier's x axis.")
    interactivity_p99: float | None = Num("p99 interactivity (the slow tail, below the median), tokens/s per user.")
    tput_per_gpu: float | None = Num("Total (input + output) tokens/s per GPU as published (metrics.tput_per_gpu): divided by every GPU of the configuration.")
    input_tput_per_prefill_gpu: float | None = Num("Input tokens/s as published (metrics.input_tput_per_gpu): divided by the prefill GPUs on disaggregated rows, by every GPU on aggregated ones.")
    output_tput_per_decode_gpu: float | None = Num("Output tokens/s as published (metrics.output_tput_per_gpu): divided by the decode GPUs on disaggregated rows, by every GPU on aggregated ones. The view observation serves output_tput_per_gpu per every GPU.")
    power_valid: int | None = F("metrics.power_valid as published: 1 validated, 0 withheld, NULL no verdict.")
    power_metric_schema_version: int | None = F("metrics.power_metric_schema_version as published (2: whole-deployment energy).")
    power_status: str = F("valid (power_valid 1, schema 2), unsupported_schema, invalid, legacy_unverified (power figures without a verdict: kept in extras only) or none.")
    avg_power_w: float | None = Num("Mean power per GPU, watts (GPU board power only); NULL unless power_valid is 1.")
    avg_total_gpu_power_w: float | None = Num("Mean power of all the configuration's GPUs together, watts (metrics.avg_total_gpu_power_w); NULL unless power_valid is 1.")
    joules_per_output_token: float | None = Num("GPU energy per output token, joules (whole deployment on schema 2); NULL unless power_valid is 1.")
    observed_on: date = F("The observation's own date (row date), not the as-of date of the request.")
    run_url: str | None = F("GitHub Actions run (with attempt) that measured the row.")
    run_started_at: str | None = F("When that run started: the row's run_started_at as published, else curve_run_started_at when the curve's date is the row's own (the curve's run is the row's run).")
    curve_date: date | None = F("Date of the run that anchors the curve the row was served on (curve_date; a point carried forward from an older run has an older date).")
    curve_workflow_run_id: str | None = F("Workflow run id of that curve run (curve_workflow_run_id).")
    curve_run_started_at: str | None = F("When that curve run started, as published (curve_run_started_at).")
    requested_as_of: date | None = F("The as-of date the request asked for (sources.toml as_of), NULL for the latest.")
    measurer: str = F("Who measured: SemiAnalysis InferenceX.")
    attribution: str = F("Attribution the publisher asks for on derivative work.")
    extras: str | None = F("JSON object of every field and metric without its own column (new ones included, legacy power figures, workers, power audit): kept, not dropped.")
    first_seen_at: datetime = F("When a refresh first fetched the row (UTC).")
    evidence: str = F(label_comment(TABLE_LABELS["inferencex_observation"]))
    source_snapshot_id: str = F("source_snapshot.id of the response the row was first read from.")


class InferencexObservation(InferencexObservationBase, table=True):
    """InferenceX observations (SemiAnalysis): one row per benchmark point, immutable, history kept."""

    __tablename__ = "inferencex_observation"


class InferencexAliasBase(SQLModel):
    id: str = F("kind:key.", primary_key=True)
    kind: str = F("hardware (an InferenceX hardware key) or model (an InferenceX raw model key).")
    key: str = F("The InferenceX key.")
    target_id: str | None = F("accelerator_alias.accelerator_id (hardware) or the warehouse model id, i.e. the MLPerf model family (model); NULL when the warehouse has no counterpart.")
    display: str | None = F("For models: the display name /api/v1/benchmarks takes.")
    note: str | None = F("Why the mapping is what it is (e.g. R1 vs the R1-0528 checkpoint).")
    file: str = F("Curated file the alias came from.")
    source_snapshot_id: str = F("source_snapshot.id of that file's bytes.")


class InferencexAlias(InferencexAliasBase, table=True):
    """InferenceX hardware and model keys mapped to accelerator and model ids (data/inferencex.yaml)."""

    __tablename__ = "inferencex_alias"


# --------------------------------------------------------------------------- self-measured runs

class SelfObservationBase(SQLModel):
    id: str = F("import_id:run index (0-based position of the run in the file).", primary_key=True)
    import_id: str = F("self_import.id of the file the run came from.")
    run_index: int = F("Position of the run in its file (0-based): a JSONL line, a GuideLLM benchmark.")
    tool: str = F("The benchmark tool that wrote the file: vllm, sglang, aiperf, guidellm or llmperf.")
    tool_version: str | None = F("The tool's version as the file records it (NULL when it records none).")
    schema_version: str | None = F("The file format version the parser recognised (the file's own schema or metadata version, else the key set that identified it).")
    file_name: str = F("Name of the imported file (no directory).")
    file_sha256: str = F("sha256 of the imported file's bytes (the raw store address).")
    model: str = F("The model as the importer stated it (--model): a warehouse model id, or any name kept as given.")
    model_in_file: str | None = F("The model the file itself names, when it names one.")
    accelerator_id: str = F("Accelerator id as the importer stated it (--accelerator); the file records none.")
    gpus: int = F("Accelerators the run used, as the importer stated it (--count): every GPU the serving deployment occupied.")
    framework: str = F("Serving framework as stated (--framework), else unstated.")
    precision: str = F("Precision as stated (--precision), else unstated.")
    note: str | None = F("The importer's note (--note).")
    definition_note: str | None = F("Where this tool's definitions differ from InferenceX's (TPOT, ITL, interactivity, lengths), in words.")
    run_at: datetime | None = F("The run's time as the file records it (vLLM: when the result was written; AIPerf, GuideLLM: the start; LLMPerf: the summary's timestamp); a time without a zone is read as UTC. NULL when the file records no time.")
    observed_on: date = F("The run's own date; the import date when the file records no time (definition_note says so).")
    conc: int | None = F("Client concurrency (simultaneous requests) of the run; NULL for a run paced by request rate alone.")
    request_rate: float | None = F("Requests per second the client offered (NULL: as fast as allowed, or not recorded).")
    isl: int | None = F("Input tokens per completed request: the run's measured mean, rounded.")
    osl: int | None = F("Output tokens per completed request: the run's measured mean, rounded.")
    duration_s: float | None = Num("Duration of the run's measured window, seconds.")
    completed_requests: int | None = F("Requests that completed successfully, as the tool counts them.")
    failed_requests: int | None = F("Requests that failed (errored), as the tool counts them; NULL when the file does not say.")
    incomplete_requests: int | None = F("Requests cut off before they finished (GuideLLM incomplete, AIPerf cancelled); NULL when the tool does not count them.")
    total_input_tokens: float | None = Num("Input tokens of the completed requests.")
    total_output_tokens: float | None = Num("Output tokens of the completed requests.")
    ttft_median_s: float | None = Num("Median time to first token, seconds.")
    ttft_p90_s: float | None = Num("p90 time to first token, seconds.")
    ttft_p99_s: float | None = Num("p99 time to first token, seconds.")
    ttft_p999_s: float | None = Num("p99.9 time to first token, seconds.")
    tpot_median_s: float | None = Num("Median time per output token after the first ((latency - TTFT) / (output tokens - 1), per request), seconds.")
    tpot_p90_s: float | None = Num("p90 time per output token, seconds.")
    tpot_p99_s: float | None = Num("p99 time per output token, seconds.")
    tpot_p999_s: float | None = Num("p99.9 time per output token, seconds.")
    itl_median_s: float | None = Num("Median inter-token latency (every gap between streamed chunks, pooled), seconds.")
    itl_p90_s: float | None = Num("p90 inter-token latency, seconds.")
    itl_p99_s: float | None = Num("p99 inter-token latency, seconds.")
    itl_p999_s: float | None = Num("p99.9 inter-token latency, seconds.")
    e2el_median_s: float | None = Num("Median end-to-end request latency, seconds.")
    e2el_p90_s: float | None = Num("p90 end-to-end latency, seconds.")
    e2el_p99_s: float | None = Num("p99 end-to-end latency, seconds.")
    e2el_p999_s: float | None = Num("p99.9 end-to-end latency, seconds.")
    interactivity: float | None = Num("Median output tokens/s per user (the frontier's x axis); interactivity_basis says how the tool's figures give it.")
    interactivity_basis: str | None = F("How interactivity was obtained from the file (e.g. 1 / median TPOT; the tool's own per-user median).")
    request_throughput: float | None = Num("Completed requests per second, as the tool reports it.")
    output_tput: float | None = Num("Output tokens/s of the whole deployment, as the tool reports it.")
    total_tput: float | None = Num("Input + output tokens/s of the whole deployment (the tool's figure, or derived from its token totals and duration where it reports none).")
    extras: str | None = F("JSON object of the run's fields without a column of their own (kept, not dropped).")
    imported_at: datetime = F("When the import that stored the run ran (UTC).")
    evidence: str = F(label_comment(TABLE_LABELS["self_observation"]))
    source_snapshot_id: str = F("source_snapshot.id of the imported file's bytes.")


class SelfObservation(SelfObservationBase, table=True):
    """Self-measured runs: benchmark results the user imported (vLLM, SGLang, AIPerf, GuideLLM, LLMPerf), one row per run, with the hardware the importer stated."""

    __tablename__ = "self_observation"


class SelfImportBase(SQLModel):
    id: str = F("Import id: the first 16 hex digits of the file's sha256 (the same bytes are the same import).", primary_key=True)
    file_name: str = F("Name of the imported file (no directory).")
    file_sha256: str = F("sha256 of the file's bytes.")
    tool: str = F("The tool detected from the file's keys.")
    tool_version: str | None = F("The tool's version as the file records it.")
    schema_version: str | None = F("The file format version the parser recognised.")
    runs: int = F("Runs stored from the file.")
    model: str = F("The model as stated at import (--model).")
    model_mapping: str = F("mapped (a warehouse model id) or unmapped (kept as given).")
    accelerator_id: str = F("Accelerator id stated at import (--accelerator).")
    gpus: int = F("Accelerator count stated at import (--count).")
    framework: str = F("Serving framework stated at import, else unstated.")
    precision: str = F("Precision stated at import, else unstated.")
    note: str | None = F("The importer's note.")
    imported_at: datetime = F("When the file was (last) imported (UTC).")
    imported_by_run: str = F("The run (refresh_run.id) that imported it.")
    removed_at: datetime | None = F("When the import was removed (perfledger import --remove); its runs are gone from self_observation, this record stays. NULL: in the warehouse.")
    removed_by_run: str | None = F("The run that removed it.")
    source_snapshot_id: str = F("source_snapshot.id of the file's bytes.")


class SelfImport(SelfImportBase, table=True):
    """Every file imported with perfledger import: what was stated, when, and whether it was removed (removal is recorded, not forgotten)."""

    __tablename__ = "self_import"


TABLES: list[type[SQLModel]] = [
    SourceSnapshot, SourceState, RefreshRun, ValidationResult, MlperfResult, MlperfRevision, Claim,
    ClaimHistory, Hardware,
    HardwareSpec,
    ModelShape, AcceleratorAlias, BenchmarkRule, RulePin, AzurePrice, CloudPrice, InferencexObservation,
    InferencexAlias, SelfObservation, SelfImport,
]

# Tables whose rows are facts: each has `evidence` and `source_snapshot_id`.
FACT_TABLES = ["mlperf_result", "mlperf_result_revision", "claim", "claim_history", "hardware_spec", "model_shape",
               "benchmark_rule", "azure_price", "cloud_price", "inferencex_observation",
               "self_observation"]


def _ddl(model: type[SQLModel]) -> str:
    import duckdb_engine  # only to compile DDL; most processes never create a table

    return str(CreateTable(model.__table__).compile(dialect=duckdb_engine.Dialect()))  # type: ignore[attr-defined]


# Columns renamed or dropped since a table was first made, and what fills the columns added to
# rows an earlier version wrote (run once, when those columns are added).
RENAMED = {"inferencex_observation": {"output_tput_per_gpu": "output_tput_per_decode_gpu",
                                      "input_tput_per_gpu": "input_tput_per_prefill_gpu"}}
DROPPED = {"inferencex_observation": ("gpus",)}  # now counted by the view observation
BACKFILL = {"inferencex_observation": """
UPDATE inferencex_observation SET
    observation_key = coalesce(observation_key, id),
    valid_from = coalesce(valid_from, first_seen_at),
    pp = coalesce(pp, TRY_CAST(json_extract_string(extras, '$.metrics.pp') AS INTEGER)),
    pcp_size = coalesce(pcp_size, TRY_CAST(json_extract_string(extras, '$.metrics.pcp_size') AS INTEGER)),
    dcp_size = coalesce(dcp_size, TRY_CAST(json_extract_string(extras, '$.metrics.dcp_size') AS INTEGER)),
    curve_date = coalesce(curve_date, TRY_CAST(json_extract_string(extras, '$.curve_date') AS DATE)),
    curve_workflow_run_id = coalesce(curve_workflow_run_id, json_extract_string(extras, '$.curve_workflow_run_id')),
    curve_run_started_at = coalesce(curve_run_started_at, json_extract_string(extras, '$.curve_run_started_at')),
    avg_total_gpu_power_w = coalesce(avg_total_gpu_power_w, CASE WHEN power_valid = 1 THEN
        TRY_CAST(json_extract_string(extras, '$.metrics.avg_total_gpu_power_w') AS DOUBLE) END)
WHERE observation_key IS NULL"""}


def _migrate(con: duckdb.DuckDBPyConnection, name: str, have: set[str]) -> set[str]:
    """Renames and drops of ``RENAMED``/``DROPPED`` on an earlier version's table; the columns
    it has afterwards."""
    for old, new in RENAMED.get(name, {}).items():
        if old in have and new not in have:
            con.execute(f'ALTER TABLE {name} RENAME COLUMN "{old}" TO "{new}"')
            have = (have - {old}) | {new}
    for old in DROPPED.get(name, ()):
        if old in have:
            con.execute(f'ALTER TABLE {name} DROP COLUMN "{old}"')
            have = have - {old}
    return have


def _add_missing_columns(con: duckdb.DuckDBPyConnection, model: type[SQLModel]) -> None:
    """A table made by an earlier version is migrated (``_migrate``), gains the columns added
    since (``BACKFILL`` or NULL in old rows), and loses NOT NULL on columns that have since
    become optional."""
    import duckdb_engine

    table = model.__table__  # type: ignore[attr-defined]
    have = _migrate(con, table.name, {r[0] for r in con.execute(
        "SELECT column_name FROM duckdb_columns() WHERE table_name = ?", [table.name]).fetchall()})
    added = False
    required = {r[0] for r in con.execute(
        "SELECT column_name FROM duckdb_columns() WHERE table_name = ? AND NOT is_nullable",
        [table.name]).fetchall()}
    for column in table.columns:
        if column.name in have:
            if column.nullable and column.name in required and not column.primary_key:
                con.execute(f'ALTER TABLE {table.name} ALTER COLUMN "{column.name}" DROP NOT NULL')
            continue
        kind = column.type.compile(dialect=duckdb_engine.Dialect())
        con.execute(f'ALTER TABLE {table.name} ADD COLUMN "{column.name}" {kind}')
        added = True
        description = model.model_fields[column.name].description
        if description:
            con.execute(f"COMMENT ON COLUMN {table.name}.{column.name} IS $${description}$$")
    if added and table.name in BACKFILL:
        con.execute(BACKFILL[table.name])


def _sync_comments(con: duckdb.DuckDBPyConnection, model: type[SQLModel]) -> None:
    """Column comments of a table made by an earlier version, rewritten where this version's
    description says something else: a staged copy of an old snapshot documents its columns as
    the code does (the views' comments are built from them)."""
    table = model.__table__  # type: ignore[attr-defined]
    have = dict(con.execute("SELECT column_name, comment FROM duckdb_columns() "
                            "WHERE table_name = ?", [table.name]).fetchall())
    for name, field in model.model_fields.items():
        if field.description and name in have and have[name] != field.description:
            con.execute(f"COMMENT ON COLUMN {table.name}.{name} IS $${field.description}$$")


def create_all(con: duckdb.DuckDBPyConnection) -> None:
    """Create every missing table, with table and column comments; add the columns a table
    made by an earlier version lacks, and bring its column comments up to date."""
    existing = {r[0] for r in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main'").fetchall()}
    for model in TABLES:
        table = model.__table__  # type: ignore[attr-defined]
        if table.name in existing:
            _add_missing_columns(con, model)
            _sync_comments(con, model)
        else:
            _create(con, model)


def _create(con: duckdb.DuckDBPyConnection, model: type[SQLModel]) -> None:
    """Create ``model``'s table with its table and column comments."""
    name = model.__table__.name  # type: ignore[attr-defined]
    con.execute(_ddl(model))
    doc = " ".join((model.__doc__ or "").strip().split("\n\n")[0].split())  # 1st paragraph
    con.execute(f"COMMENT ON TABLE {name} IS $${doc}$$")
    for column, field in model.model_fields.items():
        if field.description:
            con.execute(f"COMMENT ON COLUMN {name}.{column} IS $${field.description}$$")


# Tables kept in the order of the filters their readers use most (a VM size's prices, then its
# region's), so DuckDB's zone maps skip the row groups that cannot match. New versions are
# appended after the sorted rows; a refresh that leaves more than a tenth of a table's rows past
# its sorted start (a first load, a backfill, a price list that moved as a whole) rewrites it in
# order (``cluster``): a smaller tail costs a few row groups more per read, not a rewrite of the
# whole table every day.
CLUSTERED = {"azure_price": ("arm_sku_name", "arm_region_name", "price_key", "valid_from"),
             "cloud_price": ("instance_type", "region", "price_key", "valid_from")}
UNSORTED_TAIL = 0.1


def cluster(con: duckdb.DuckDBPyConnection) -> None:
    """Rewrite each CLUSTERED table with more than UNSORTED_TAIL of its rows past its sorted
    start, in its order (constraints and comments as created). The sorted rows wait in a
    temporary table while the old one is dropped and checkpointed, so the new one reuses its
    blocks: the staged file does not grow (a refresh that fails here is discarded)."""
    for model in TABLES:
        name = model.__table__.name  # type: ignore[attr-defined]
        if name not in CLUSTERED:
            continue
        keys = ", ".join(CLUSTERED[name])
        rows, tail = con.execute(  # the tail: from the first row that sorts before the one above
            f"SELECT count(*), count(*) FILTER (WHERE rowid >= (SELECT min(r) FROM (SELECT rowid "  # noqa: S608
            f"AS r, lag(({keys})) OVER (ORDER BY rowid) > ({keys}) AS back FROM {name}) "
            f"WHERE back)) FROM {name}").fetchone() or (0, 0)
        if tail <= rows * UNSORTED_TAIL:
            continue
        con.execute(f"CREATE TEMP TABLE _clustered AS SELECT * FROM {name} ORDER BY {keys}")  # noqa: S608
        con.execute(f"DROP TABLE {name}")
        con.execute("CHECKPOINT")
        _create(con, model)
        con.execute(f"INSERT INTO {name} BY NAME SELECT * FROM _clustered")  # noqa: S608
        con.execute("DROP TABLE _clustered")


def empty_warehouse() -> duckdb.DuckDBPyConnection:
    """An in-memory warehouse with every table and derived view and no rows: what the API
    serves before the first publish, and what ``perfledger describe`` documents (with the
    read-only guards of ``warehouse.storage.db``: nothing outside it can be read or written)."""
    from warehouse.figures import derived
    from warehouse.storage.db import GUARD_SQL, NO_SPILL

    con = duckdb.connect(":memory:", config=NO_SPILL)
    create_all(con)
    derived.install(con)
    con.execute(GUARD_SQL)
    return con
