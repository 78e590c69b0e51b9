"""The curated files' schemas: what each entry of a file in ``data/`` must say. The allowed
evidence labels are the vocabulary's (``warehouse.model.vocabulary``), the same sets validation checks.
Which file holds what: ``ingest.curated.parse``.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from warehouse.model.vocabulary import (
    CLAIM_LABELS,
    MODEL_SHAPE_LABELS,
    SPEC_LABELS,
    TEXT_FIGURES,
    Evidence,
)


def _https(url: str) -> str:
    if not url.startswith("https://"):
        raise ValueError("source_url must be an https:// URL")
    return url


HttpsUrl = Annotated[str, AfterValidator(_https)]


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class Source(_Entry):
    """Where a figure comes from: an https URL, or (for `assumption` entries only) a document
    in this project such as the seed article. ``url`` is the page read; when that page is a
    secondary one reproducing the vendor's table (a retailer's copy of the datasheet, a
    re-hosted product brief), ``cited_via`` says so (it is then the same as ``url``) and
    ``vendor_url`` names the vendor's own page when known."""

    title: str
    url: HttpsUrl | None = None
    document: str | None = None
    checked_on: date
    quote: str | None = None
    cited_via: HttpsUrl | None = None
    vendor_url: HttpsUrl | None = None

    @model_validator(mode="after")
    def _somewhere(self) -> Source:
        if not self.url and not self.document:
            raise ValueError("a source needs a url (https://...)")
        return self

    @property
    def where(self) -> str:
        """The URL, or ``document:<name>`` for a project document."""
        return self.url or f"document:{self.document}"


def _label_in(v: Evidence, allowed: frozenset[Evidence], what: str) -> Evidence:
    if v not in allowed:
        raise ValueError(f"{what} cannot be labelled {v.value!r} (only the MLPerf ingester writes "
                         f"'measured'); use one of {', '.join(sorted(e.value for e in allowed))}")
    return v


def _need_url(source: Source, evidence: Evidence) -> None:
    if evidence is not Evidence.assumption and not source.url:
        raise ValueError(f"an entry labelled {evidence.value!r} needs a source url (https://...); "
                         "only assumptions may cite a project document")


class Recompute(_Entry):
    """Recompute a ratio claim from two hardware specs: numerator / denominator."""

    numerator: str
    denominator: str


class ClaimEntry(_Entry):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")
    vendor: str
    product: str | None = None
    model: str | None = None
    accelerator_id: str | None = None
    metric: str
    value: float = Field(gt=0)
    unit: str
    evidence: Evidence
    claimed_on: date | None = None
    source: Source
    conditions: dict[str, str | float | int | bool] = Field(default_factory=dict)
    recompute: Recompute | None = None
    note: str | None = None

    @field_validator("evidence")
    @classmethod
    def _not_measured(cls, v: Evidence) -> Evidence:
        return _label_in(v, CLAIM_LABELS, "a curated claim")

    @model_validator(mode="after")
    def _dated(self, info: ValidationInfo) -> ClaimEntry:
        _need_url(self.source, self.evidence)
        if self.evidence in (Evidence.vendor_claim, Evidence.vendor_projection) \
                and self.claimed_on is None:
            raise ValueError("claimed_on is required for a vendor_claim or vendor_projection")
        if self.claimed_on and self.claimed_on > self.source.checked_on:
            raise ValueError(f"claimed_on {self.claimed_on} is after checked_on "
                             f"{self.source.checked_on}")
        # "today" is the refresh's (time from the data: never before the newest snapshot)
        today = (info.context or {}).get("today") or datetime.now(UTC).date()
        if self.source.checked_on > today:
            raise ValueError(f"checked_on {self.source.checked_on} is in the future")
        return self


class ClaimsFile(_Entry):
    claims: list[ClaimEntry]


# Figures given as words, not numbers (a hardware spec has a ``value`` or a ``text``).
TEXT_METRICS = TEXT_FIGURES


class Spec(_Entry):
    """One figure: a number in SI units (``value``, ``unit``) or, for ``TEXT_METRICS``, words
    (``text``); always with its source and, for a datasheet figure, the quoted text."""

    metric: str
    value: float | None = Field(default=None, gt=0)
    text: str | None = None
    unit: str | None = None
    evidence: Evidence = Evidence.vendor_spec
    source: Source
    note: str | None = None

    @model_validator(mode="after")
    def _value_or_text(self) -> Spec:
        if self.metric in TEXT_METRICS:
            if self.text is None or self.value is not None:
                raise ValueError(f"{self.metric} is given as text (text: ...), not a value")
        elif self.value is None or self.unit is None or self.text is not None:
            raise ValueError(f"{self.metric} needs a value and a unit")
        return self

    @field_validator("evidence")
    @classmethod
    def _spec_label(cls, v: Evidence) -> Evidence:
        return _label_in(v, SPEC_LABELS, "a hardware spec")

    @model_validator(mode="after")
    def _sourced(self) -> Spec:
        _need_url(self.source, self.evidence)
        if self.evidence is Evidence.vendor_spec and not self.source.quote:
            raise ValueError("a vendor_spec figure needs the quoted text (source.quote)")
        return self


class HardwareEntry(_Entry):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")
    name: str
    vendor: str
    kind: Literal["accelerator", "system", "rack"]
    accelerator_id: str | None = None
    accelerator_count: int | None = Field(default=None, gt=0)
    specs: list[Spec] = Field(default_factory=list)


class HardwareFile(_Entry):
    hardware: list[HardwareEntry]


class ModelEntry(_Entry):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9._ ()-]*$")
    name: str
    illustrative: bool = False
    params: float | None = Field(default=None, gt=0)
    active_params: float | None = Field(default=None, gt=0)
    layers: int | None = Field(default=None, gt=0)
    kv_heads: int | None = Field(default=None, gt=0)
    head_dim: int | None = Field(default=None, gt=0)
    evidence: Evidence
    source: Source
    note: str | None = None

    @field_validator("evidence")
    @classmethod
    def _shape_label(cls, v: Evidence) -> Evidence:
        return _label_in(v, MODEL_SHAPE_LABELS, "a model shape")

    @model_validator(mode="after")
    def _sourced(self) -> ModelEntry:
        _need_url(self.source, self.evidence)
        return self


class ModelsFile(_Entry):
    models: list[ModelEntry]


class AcceleratorEntry(_Entry):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")
    vendor: str
    name: str | None = None
    mlperf_names: list[str] = Field(default_factory=list)
    note: str | None = None
    # GPUs in one unit as MLPerf counts it (a dual-GPU board is one accelerator there): "per
    # GPU" divides by every GPU. More than 1 needs its source (url and quote).
    gpus_per_unit: int = Field(default=1, ge=1)
    gpus_source: Source | None = None

    @model_validator(mode="after")
    def _gpus_sourced(self) -> AcceleratorEntry:
        if self.gpus_per_unit > 1:
            if self.gpus_source is None or not self.gpus_source.url or not self.gpus_source.quote:
                raise ValueError(f"gpus_per_unit {self.gpus_per_unit} needs gpus_source with "
                                 "a url and a quote")
        return self


class AzureSku(_Entry):
    sku: str = Field(pattern=r"^Standard_")
    accelerator_id: str
    count: int = Field(gt=0)
    source: Source

    @model_validator(mode="after")
    def _sourced(self) -> AzureSku:
        _need_url(self.source, Evidence.vendor_spec)
        return self


class SpecialName(_Entry):
    name: str
    mix: Literal["mixed", "none"]


class AcceleratorsFile(_Entry):
    accelerators: list[AcceleratorEntry]
    special_mlperf_names: list[SpecialName] = Field(default_factory=list)
    azure_skus: list[AzureSku] = Field(default_factory=list)
