"""One cloud's ``vms.csv`` of the SkyPilot catalog → typed ``cloud_price`` rows.

Columns are read by name (their order differs per cloud). Each CSV row gives an on-demand row
(``Price``) and a spot row (``SpotPrice``); an empty price is no price; a spot price of 0 is
"no spot" (skipped); $0 on demand and GCP's 700.0 TPU placeholder are refused (kept with the
reason, never a price). GCP bills an A2/A3 host and its GPUs as two rows: the GPU row (no
InstanceType) is added to its host's row (``gcp_hosts`` of the rules file); a GPU row with no
host row is a GPU's price alone, never an instance's (refused: ``gpu_only``). Azure's
``_Promo`` sizes carry their base size's Low Priority price (SkyPilot's fetch_azure joins
them so), a low_priority offer. A malformed file fails with the file, line and column named.
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
from collections.abc import Iterator
from datetime import datetime

from ingest.cloud_prices.identity import Rules
from warehouse.exceptions import ParseError
from warehouse.model.vocabulary import CatalogSentinel, Evidence, Offer

SOURCE = "cloud_prices"
PARSER_VERSION = "skypilot-catalog-v8/2"
REQUIRED = ("InstanceType", "AcceleratorName", "AcceleratorCount", "Price", "Region")
NUMBERS = ("AcceleratorCount", "vCPUs", "MemoryGiB", "Price", "SpotPrice")
PLACEHOLDER = 700.0  # GCP writes it for TPU slices it has no price for


def _records(body: bytes, where: str) -> Iterator[tuple[int, dict]]:
    """(line, record) of every data row, numbers converted; errors name line and column."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ParseError(f"{where}: not UTF-8 text (byte {e.start})", source=SOURCE) from None
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    start = 1  # the line a record starts on (a quoted field may span lines)
    try:
        header = next(reader)
        missing = [c for c in REQUIRED if c not in header]
        if missing:
            raise ParseError(f"{where}, line 1: no column {', '.join(missing)} (header: "
                             f"{','.join(header)[:200]})", source=SOURCE, line=1)
        start = reader.line_num + 1
        for fields in reader:
            if len(fields) != len(header):
                raise ParseError(f"{where}, line {start}: {len(fields)} fields where the header "
                                 f"has {len(header)}", source=SOURCE, line=start)
            record: dict = dict(zip(header, fields, strict=True))
            for column in NUMBERS:
                record[column] = _number(record.get(column, ""), where, start, column)
            yield start, record
            start = reader.line_num + 1
    except csv.Error as e:
        spans = f" (a quoted field runs on to line {reader.line_num})" \
            if reader.line_num > start else ""
        raise ParseError(f"{where}, line {start}: malformed CSV: {e}{spans}", source=SOURCE,
                         line=start) from None


def _number(text: str, where: str, line: int, column: str) -> float | None:
    if text.strip() == "":
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise ParseError(f"{where}, line {line}, column {column}: {text[:40]!r} is not a price "
                         "or count (a finite number >= 0)", source=SOURCE, line=line,
                         column=column)
    return value


def _sum_gcp_hosts(records: list[tuple[int, dict]], hosts: dict[str, list[str]],
                   notes: list[str]) -> list[tuple[int, dict]]:
    """GCP: each GPU row added to its host row (same region and zone); the GPU row goes. A
    GPU row with no host row stays, marked ``gpu_only``."""
    by_host = {(r["InstanceType"], r["Region"], r.get("AvailabilityZone")): r
               for _, r in records if r["InstanceType"]}
    kept: list[tuple[int, dict]] = []
    hostless: dict[str, int] = {}  # accelerator name -> GPU rows with no host family
    for line, r in records:
        name = r["AcceleratorName"]
        gpu = not r["InstanceType"] and bool(name) and not name.lower().startswith("tpu-")
        families = hosts.get(name, []) if gpu else []
        count, zone = int(r["AcceleratorCount"] or 0), r.get("AvailabilityZone")
        host = next((by_host[k] for k in ((f"{f}-{count}g", r["Region"], zone) for f in families)
                     if k in by_host), None)
        if families and host is None:
            notes.append(f"line {line}: {name} x{r['AcceleratorCount']} in "
                         f"{zone or r['Region']} has no {' or '.join(families)} host row")
        elif gpu and host is None:
            hostless[name] = hostless.get(name, 0) + 1
        if host is None:
            r["gpu_only"] = gpu
            kept.append((line, r))
            continue
        host["AcceleratorName"], host["AcceleratorCount"] = r["AcceleratorName"], r["AcceleratorCount"]
        host["gpu_part"] = r["Price"]
        host["Price"] = _add(host["Price"], r["Price"])
        host["SpotPrice"] = _add(host["SpotPrice"], r["SpotPrice"])
    if hostless:
        notes.append(f"GPU rows with no host family in gcp_hosts, a GPU's price alone and so "
                     f"no instance's (refused: gpu_only): "
                     f"{', '.join(f'{n} {k}' for k, n in sorted(hostless.items()))}")
    return kept


def _add(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a + b


def _refused(price: float, name: str, gpu_only: bool) -> str | None:
    if price == 0:
        return CatalogSentinel.zero
    if price == PLACEHOLDER and name.lower().startswith("tpu-"):
        return CatalogSentinel.placeholder_700
    if gpu_only:
        return CatalogSentinel.gpu_only
    return None


def _offers(cloud: str, r: dict, rules: Rules) -> tuple[tuple[Offer, float | None], ...]:
    """A row's prices by offer: ``Price`` on demand (low priority for Azure's _Promo sizes) and
    ``SpotPrice`` spot; a cloud whose catalog writes a spot market's price in both
    (``price_is_spot`` in the rules file: Mithril) has one spot price and no on-demand one."""
    if cloud in rules.file.price_is_spot:
        return ((Offer.spot, r["SpotPrice"] if r.get("SpotPrice") is not None else r["Price"]),)
    promo = cloud == "azure" and r["InstanceType"].endswith("_Promo")
    return ((Offer.low_priority if promo else Offer.on_demand, r["Price"]),
            (Offer.spot, r.get("SpotPrice")))


def parse(body: bytes, *, cloud: str, commit: str, rules: Rules, snapshot_id: str,
          observed_at: datetime, notes: list[str]) -> Iterator[dict]:
    """Typed rows of one cloud's CSV; ``notes`` gets what the refresh should report."""
    where = f"{SOURCE} {cloud}: catalogs/v8/{cloud}/vms.csv"
    records = list(_records(body, where))
    if cloud == "gcp":
        records = _sum_gcp_hosts(records, rules.file.gcp_hosts, notes)
    for line, r in records:
        name = r["AcceleratorName"] or None
        m = rules.match(cloud, r["InstanceType"], name, r["AcceleratorCount"], r.get("GpuInfo"))
        for offer, price in _offers(cloud, r, rules):
            if price is None or (offer == Offer.spot and price == 0):
                continue  # no price published; spot 0.00 is the catalog's "no spot"
            refused = _refused(price, name or "", r.get("gpu_only", False))
            key = hashlib.sha256("\x1f".join(str(p) for p in (
                cloud, r["InstanceType"], name, r["Region"], r.get("AvailabilityZone"), offer))
                .encode()).hexdigest()[:16]
            yield {
                "id": hashlib.sha256(f"{key}\x1f{price}\x1f{refused}\x1f{commit}".encode())
                .hexdigest()[:16],
                "price_key": key, "cloud": cloud, "instance_type": r["InstanceType"],
                "accelerator_name": name, "catalog_count": r["AcceleratorCount"],
                "accelerator_id": m.accelerator_id, "accelerators": m.count,
                "accelerator_match": m.match.value, "accelerator_candidates": m.candidates,
                "vcpus": r.get("vCPUs"), "memory_gib": r.get("MemoryGiB"),
                "region": r["Region"], "zone": r.get("AvailabilityZone") or None,
                "offer": offer.value, "hourly_price": None if refused else price,
                "published_price": price, "refused": refused,
                "gpu_part": r.get("gpu_part") if offer == Offer.on_demand else None,
                "catalog_commit": commit, "catalog_line": line,
                "valid_from": observed_at, "valid_to": None, "first_seen_at": observed_at,
                "last_seen_at": observed_at, "listed": True,
                "evidence": Evidence.list_price.value, "source_snapshot_id": snapshot_id,
            }
