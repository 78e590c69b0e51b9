"""Curated sources in ``data/`` (reviewed like code): claims, hardware specs, model shapes,
accelerator aliases. YAML files checked against pydantic schemas; a bad file is rejected with
the file, the entry and the field named, and nothing from it is loaded.

Files and what they hold:
    data/claims.yaml        dated vendor claims, projections, vendor/third-party measurements,
                            paper results (never `measured`)
    data/hardware.yaml      accelerators and systems with their peak figures (`vendor_spec`)
    data/models.yaml        model shapes (`vendor_spec` for real models, `assumption` for the
                            article's illustrative shapes)
    data/accelerators.yaml  accelerator ids, their spellings in MLPerf, and the Azure VM sizes
                            that rent them (with how many per VM)
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Annotated, Literal

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from ingest.http import Raw
from warehouse.evidence import CURATED_LABELS, Evidence
from warehouse.exceptions import CuratedFileError

SOURCE = "curated"
PARSER_VERSION = "curated-yaml/1"
FILES = ("accelerators.yaml", "hardware.yaml", "models.yaml", "claims.yaml")


def _https(url: str) -> str:
    if not url.startswith("https://"):
        raise ValueError("source_url must be an https:// URL")
    return url


HttpsUrl = Annotated[str, AfterValidator(_https)]


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class Source(_Entry):
    """Where a figure comes from: an https URL, or (for `assumption` entries only) a document
    in this project such as the seed article."""

    title: str
    url: HttpsUrl | None = None
    document: str | None = None
    checked_on: date
    quote: str | None = None

    @model_validator(mode="after")
    def _somewhere(self) -> Source:
        if not self.url and not self.document:
            raise ValueError("a source needs a url (https://...)")
        return self

    @property
    def where(self) -> str:
        """The URL, or ``document:<name>`` for a project document."""
        return self.url or f"document:{self.document}"


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
        if v not in CURATED_LABELS:
            raise ValueError(f"a curated claim cannot be labelled {v.value!r}; only the MLPerf "
                             f"ingester writes 'measured'. Use one of "
                             f"{', '.join(sorted(e.value for e in CURATED_LABELS))}")
        return v

    @model_validator(mode="after")
    def _dated(self) -> ClaimEntry:
        _need_url(self.source, self.evidence)
        if self.evidence in (Evidence.vendor_claim, Evidence.vendor_projection) \
                and self.claimed_on is None:
            raise ValueError("claimed_on is required for a vendor_claim or vendor_projection")
        if self.claimed_on and self.claimed_on > self.source.checked_on:
            raise ValueError(f"claimed_on {self.claimed_on} is after checked_on "
                             f"{self.source.checked_on}")
        if self.source.checked_on > datetime.now(UTC).date():
            raise ValueError(f"checked_on {self.source.checked_on} is in the future")
        return self


class ClaimsFile(_Entry):
    claims: list[ClaimEntry]


class Spec(_Entry):
    metric: str
    value: float = Field(gt=0)
    unit: str
    evidence: Evidence = Evidence.vendor_spec
    source: Source
    note: str | None = None

    @model_validator(mode="after")
    def _sourced(self) -> Spec:
        _need_url(self.source, self.evidence)
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

    @model_validator(mode="after")
    def _sourced(self) -> ModelEntry:
        _need_url(self.source, self.evidence)
        return self


class ModelsFile(_Entry):
    models: list[ModelEntry]


class AcceleratorEntry(_Entry):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")
    vendor: str
    mlperf_names: list[str] = Field(default_factory=list)


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


SCHEMAS: dict[str, type[BaseModel]] = {
    "claims.yaml": ClaimsFile, "hardware.yaml": HardwareFile, "models.yaml": ModelsFile,
    "accelerators.yaml": AcceleratorsFile,
}


def read_files(directory: Path) -> list[Raw]:
    """The curated files' bytes, one ``Raw`` per file."""
    out = []
    for name in FILES:
        path = directory / name
        if not path.exists():
            raise CuratedFileError(f"{SOURCE}: {path} is missing", source=SOURCE, url=str(path))
        out.append(Raw(source=SOURCE, url=str(path), body=path.read_bytes(),
                       fetched_at=datetime.now(UTC)))
    return out


def _where(data: object, loc: tuple) -> str:
    """``claims[3] (id cerebras-405b).value`` from a pydantic error location."""
    parts: list[str] = []
    node = data
    for step in loc:
        if isinstance(step, int):
            entry_id = node[step].get("id") if isinstance(node, list) and step < len(node) \
                and isinstance(node[step], dict) else None
            parts[-1] += f"[{step}]" + (f" (id {entry_id})" if entry_id else "")
        else:
            parts.append(str(step))
        try:
            node = node[step]  # type: ignore[index]
        except (KeyError, IndexError, TypeError):
            node = None
    return ".".join(parts)


def load(raw: Raw) -> BaseModel:
    """Parse and check one curated file; ``CuratedFileError`` names file, entry and field."""
    name = Path(raw.url).name
    try:
        data = yaml.safe_load(raw.body.decode("utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as e:
        raise CuratedFileError(f"{SOURCE}: {name}: not valid YAML: {e}", source=SOURCE,
                               url=raw.url) from None
    try:
        return SCHEMAS[name].model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        where = _where(data, tuple(first["loc"]))
        raise CuratedFileError(
            f"{SOURCE}: {name}: {where}: {first['msg']}"
            + (f" ({len(e.errors())} problems in all)" if len(e.errors()) > 1 else ""),
            source=SOURCE, url=raw.url, field=where) from None


def rows(parsed: dict[str, BaseModel], snapshots: dict[str, str]) -> dict[str, list[dict]]:
    """Table rows from the parsed files; ``snapshots`` maps file name → source snapshot id."""
    out: dict[str, list[dict]] = {"claim": [], "hardware": [], "hardware_spec": [],
                                  "model_shape": [], "accelerator_alias": []}
    claims: ClaimsFile = parsed["claims.yaml"]  # type: ignore[assignment]
    for c in claims.claims:
        out["claim"].append({
            "id": c.id, "vendor": c.vendor, "product": c.product, "model": c.model,
            "metric": c.metric, "value": c.value, "unit": c.unit, "evidence": c.evidence.value,
            "claimed_on": c.claimed_on, "checked_on": c.source.checked_on,
            "source_title": c.source.title, "source_url": c.source.where, "quote": c.source.quote,
            "conditions": json.dumps(c.conditions) if c.conditions else None,
            "accelerator_id": c.accelerator_id, "note": c.note,
            "recompute_numerator": c.recompute.numerator if c.recompute else None,
            "recompute_denominator": c.recompute.denominator if c.recompute else None,
            "file": "claims.yaml",
            "source_snapshot_id": snapshots["claims.yaml"]})
    hw: HardwareFile = parsed["hardware.yaml"]  # type: ignore[assignment]
    for h in hw.hardware:
        out["hardware"].append({
            "id": h.id, "name": h.name, "vendor": h.vendor, "kind": h.kind,
            "accelerator_id": h.accelerator_id, "accelerator_count": h.accelerator_count,
            "file": "hardware.yaml", "source_snapshot_id": snapshots["hardware.yaml"]})
        for s in h.specs:
            out["hardware_spec"].append({
                "id": f"{h.id}:{s.metric}", "hardware_id": h.id, "metric": s.metric,
                "value": s.value, "unit": s.unit, "evidence": s.evidence.value,
                "checked_on": s.source.checked_on, "source_title": s.source.title,
                "source_url": s.source.where, "quote": s.source.quote, "note": s.note,
                "file": "hardware.yaml", "source_snapshot_id": snapshots["hardware.yaml"]})
    models: ModelsFile = parsed["models.yaml"]  # type: ignore[assignment]
    for m in models.models:
        out["model_shape"].append({
            "id": m.id, "name": m.name, "illustrative": m.illustrative, "params": m.params,
            "active_params": m.active_params, "layers": m.layers, "kv_heads": m.kv_heads,
            "head_dim": m.head_dim, "evidence": m.evidence.value,
            "checked_on": m.source.checked_on, "source_title": m.source.title,
            "source_url": m.source.where, "note": m.note, "file": "models.yaml",
            "source_snapshot_id": snapshots["models.yaml"]})
    acc: AcceleratorsFile = parsed["accelerators.yaml"]  # type: ignore[assignment]
    sid = snapshots["accelerators.yaml"]
    for a in acc.accelerators:
        for name in a.mlperf_names:
            out["accelerator_alias"].append({
                "alias": name, "accelerator_id": a.id, "vendor": a.vendor, "mix": "single",
                "count": None, "kind": "mlperf_name", "file": "accelerators.yaml",
                "source_snapshot_id": sid})
    for sp in acc.special_mlperf_names:
        out["accelerator_alias"].append({
            "alias": sp.name, "accelerator_id": None, "vendor": None, "mix": sp.mix,
            "count": None, "kind": "mlperf_name", "file": "accelerators.yaml",
            "source_snapshot_id": sid})
    known = {a.id for a in acc.accelerators}
    for sku in acc.azure_skus:
        if sku.accelerator_id not in known:
            raise CuratedFileError(f"{SOURCE}: accelerators.yaml: azure_skus ({sku.sku}): "
                                   f"accelerator_id {sku.accelerator_id!r} is not declared "
                                   "under accelerators", source=SOURCE, field="accelerator_id")
        out["accelerator_alias"].append({
            "alias": sku.sku, "accelerator_id": sku.accelerator_id,
            "vendor": next(a.vendor for a in acc.accelerators if a.id == sku.accelerator_id),
            "mix": "single", "count": sku.count, "kind": "azure_sku", "file": "accelerators.yaml",
            "source_snapshot_id": sid})
    _check_unique(out)
    specs = {r["id"] for r in out["hardware_spec"]}
    for claim_row in out["claim"]:
        for ref in (claim_row["recompute_numerator"], claim_row["recompute_denominator"]):
            if ref is not None and ref not in specs:
                raise CuratedFileError(f"{SOURCE}: claims.yaml: claim {claim_row['id']}: recompute refers to "
                                       f"{ref!r}, which is not a hardware spec id "
                                       "(hardware id:metric)", source=SOURCE, field="recompute")
    return out


def _check_unique(out: dict[str, list[dict]]) -> None:
    for table, key in (("claim", "id"), ("hardware", "id"), ("hardware_spec", "id"),
                       ("model_shape", "id"), ("accelerator_alias", "alias")):
        seen: set[str] = set()
        for r in out[table]:
            if r[key] in seen:
                raise CuratedFileError(f"{SOURCE}: {r['file']}: duplicate {key} {r[key]!r}",
                                       source=SOURCE, field=key)
            seen.add(r[key])
