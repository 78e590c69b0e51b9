"""Read and check the curated files in ``data/``; turn them into table rows.

A bad file is rejected with the file, the entry and the field named, and nothing from it is
loaded. Files and what they hold:
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

import yaml
from pydantic import BaseModel, ValidationError

from ingest.curated.files import (
    AcceleratorEntry,
    AcceleratorsFile,
    ClaimsFile,
    HardwareFile,
    ModelsFile,
)
from ingest.http import Raw
from warehouse.exceptions import CuratedFileError
from warehouse.model.vocabulary import model_family, normalise_model

SOURCE = "curated"
PARSER_VERSION = "curated-yaml/1"
FILES = ("accelerators.yaml", "hardware.yaml", "models.yaml", "claims.yaml")
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


def check_file(raw: Raw, today: date | None = None) -> BaseModel:
    """Parse and check one curated file; ``CuratedFileError`` names file, entry and field.
    ``today`` (default: the clock's) is the latest date a check may carry."""
    name = Path(raw.url).name
    try:
        data = yaml.safe_load(raw.body.decode("utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as e:
        raise CuratedFileError(f"{SOURCE}: {name}: not valid YAML: {e}", source=SOURCE,
                               url=raw.url) from None
    try:
        return SCHEMAS[name].model_validate(data, context={"today": today})
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
    _claims(out, parsed["claims.yaml"], snapshots)  # type: ignore[arg-type]
    _hardware(out, parsed["hardware.yaml"], snapshots)  # type: ignore[arg-type]
    _models(out, parsed["models.yaml"], snapshots)  # type: ignore[arg-type]
    _aliases(out, parsed["accelerators.yaml"], snapshots["accelerators.yaml"])  # type: ignore[arg-type]
    _check_unique(out)
    _check_recompute(out)
    return out


def _claims(out: dict[str, list[dict]], claims: ClaimsFile, snapshots: dict[str, str]) -> None:
    for c in claims.claims:
        out["claim"].append({
            "id": c.id, "vendor": c.vendor, "product": c.product, "model": c.model,
            "model_family": model_family(normalise_model(c.model)) if c.model else None,
            "metric": c.metric, "value": c.value, "unit": c.unit, "evidence": c.evidence.value,
            "claimed_on": c.claimed_on, "checked_on": c.source.checked_on,
            "source_title": c.source.title, "source_url": c.source.where, "quote": c.source.quote,
            "conditions": json.dumps(c.conditions) if c.conditions else None,
            "accelerator_id": c.accelerator_id, "note": c.note,
            "recompute_numerator": c.recompute.numerator if c.recompute else None,
            "recompute_denominator": c.recompute.denominator if c.recompute else None,
            "file": "claims.yaml",
            "source_snapshot_id": snapshots["claims.yaml"]})


def _hardware(out: dict[str, list[dict]], hw: HardwareFile, snapshots: dict[str, str]) -> None:
    for h in hw.hardware:
        out["hardware"].append({
            "id": h.id, "name": h.name, "vendor": h.vendor, "kind": h.kind,
            "accelerator_id": h.accelerator_id, "accelerator_count": h.accelerator_count,
            "file": "hardware.yaml", "source_snapshot_id": snapshots["hardware.yaml"]})
        for s in h.specs:
            out["hardware_spec"].append({
                "id": f"{h.id}:{s.metric}", "hardware_id": h.id, "metric": s.metric,
                "value": s.value, "value_text": s.text, "unit": s.unit,
                "evidence": s.evidence.value, "checked_on": s.source.checked_on,
                "source_title": s.source.title, "source_url": s.source.where,
                "quote": s.source.quote, "cited_via": s.source.cited_via,
                "vendor_url": s.source.vendor_url, "note": s.note,
                "file": "hardware.yaml", "source_snapshot_id": snapshots["hardware.yaml"]})


def _models(out: dict[str, list[dict]], models: ModelsFile, snapshots: dict[str, str]) -> None:
    for m in models.models:
        out["model_shape"].append({
            "id": m.id, "name": m.name, "illustrative": m.illustrative, "params": m.params,
            "active_params": m.active_params, "layers": m.layers, "kv_heads": m.kv_heads,
            "head_dim": m.head_dim, "evidence": m.evidence.value,
            "checked_on": m.source.checked_on, "source_title": m.source.title,
            "source_url": m.source.where, "note": m.note, "file": "models.yaml",
            "source_snapshot_id": snapshots["models.yaml"]})


def _gpus_note(a: AcceleratorEntry) -> str | None:
    """The accelerator's note, with the source of its GPUs per unit when more than one."""
    src = a.gpus_source
    if a.gpus_per_unit == 1 or src is None:
        return a.note
    said = (f"{a.gpus_per_unit} GPUs per unit: {src.title}, {src.url} (checked "
            f"{src.checked_on}): \"{src.quote}\"")
    return f"{a.note} {said}" if a.note else said


def _aliases(out: dict[str, list[dict]], acc: AcceleratorsFile, sid: str) -> None:
    for a in acc.accelerators:
        out["accelerator_alias"].append({
            "alias": a.id, "accelerator_id": a.id, "vendor": a.vendor, "mix": "single",
            "count": a.gpus_per_unit if a.gpus_per_unit > 1 else None, "kind": "id",
            "name": a.name, "note": _gpus_note(a), "file": "accelerators.yaml",
            "source_snapshot_id": sid})
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


def _check_recompute(out: dict[str, list[dict]]) -> None:
    """A claim's recompute refers to hardware spec ids that exist."""
    specs = {r["id"] for r in out["hardware_spec"]}
    for claim_row in out["claim"]:
        for ref in (claim_row["recompute_numerator"], claim_row["recompute_denominator"]):
            if ref is not None and ref not in specs:
                raise CuratedFileError(f"{SOURCE}: claims.yaml: claim {claim_row['id']}: recompute refers to "
                                       f"{ref!r}, which is not a hardware spec id "
                                       "(hardware id:metric)", source=SOURCE, field="recompute")


def _check_unique(out: dict[str, list[dict]]) -> None:
    for table, key in (("claim", "id"), ("hardware", "id"), ("hardware_spec", "id"),
                       ("model_shape", "id"), ("accelerator_alias", "alias")):
        seen: set[str] = set()
        for r in out[table]:
            if r[key] in seen:
                raise CuratedFileError(f"{SOURCE}: {r['file']}: duplicate {key} {r[key]!r}",
                                       source=SOURCE, field=key)
            seen.add(r[key])
