"""Load the SkyPilot catalog into ``cloud_price``: each cloud on its own, prices versioned.

Each cloud's ``catalogs/v8/<cloud>/vms.csv`` is read at its pinned commit (a raw file URL, so
the source snapshot cites the commit), parsed whole, then versioned in SQL exactly as Azure's
prices are (``ingest.versions``): a changed price closes its version and opens a new one, a row
gone from the cloud's file is closed and unlisted. A cloud whose file cannot be fetched (and
has no carried copy) or read keeps its last good rows and is named; the others load. When the
fetch fails, the built-in mirror's carried sample for that commit stands in.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator

from ingest.cloud_prices.identity import Rules, read_rules
from ingest.cloud_prices.parse import PARSER_VERSION, SOURCE, parse
from ingest.context import CURATED_DATA, LoadContext, SourceConfig
from ingest.mirror import fetch_or_carried
from ingest.versions import version
from warehouse.exceptions import PerfledgerError, SourceError
from warehouse.model.vocabulary import SourceStatus
from warehouse.redact import redact
from warehouse.storage.db import insert_columns, scalar

Commit = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{40}$")]
CATALOG = "https://raw.githubusercontent.com/skypilot-org/skypilot-catalog"
CATALOG_PATH = "catalogs/v8/{cloud}/vms.csv"


class CloudPin(BaseModel):
    """One cloud's file: the commit it is read at, and the repository's raw URL base."""

    model_config = ConfigDict(extra="forbid")

    commit: Commit
    base_url: str | None = Field(None, description="Raw file base of the repository (default: "
                                 "the section's base_url).")


# Every cloud the catalog's v8 layout carries, each pinned to a commit at which its vms.csv
# was read; the built-in mirror carries samples of azure, daytona, gcp, hyperbolic, lambda,
# mithril, nebius, oci, runpod, vast and verda (ingest/mirror/skypilot_catalog). Azure's v8
# file, and Verda's with GB300 sizes, are read from public forks.
_PINS = """aws e385a0d348eda9cefd9806423e7725944dc249e4
cudo e280db6c2d70d4828c039527b027ea3a14a88073
daytona 0eb5da57210acb5149367bd2b2f23237591aa2f5
gcp 006059e0f18acb1341e22a27751e9f80df6ba92f
hyperbolic 0082b0435f3912ae4c566856b272455cc78f4f61
hyperstack fdc9d908ab0b2af9f468f139fb3f662c8c6b3257
jarvislabs 8f097115551e2c48a5eb9a8fafe37e23290ff691
lambda 0f4070387edc953d7004cff197940e1918a1d6aa
lium b286816ca6cb4630adc5bcbc45473553e082804d
mithril 1f9eb0c264f9a6d78833766f4b18353ac7dfdde9
nebius 0082b0435f3912ae4c566856b272455cc78f4f61
oci 0588751183820cf2dab5c8a89447e8aac9f73fd5
primeintellect d9a304ea01e96cd4a043159c60d9326d8de4cf0f
runpod 01acdfd419ce5afae1289ff14825b893ced0c196
seeweb 0082b0435f3912ae4c566856b272455cc78f4f61
shadeform 8e50954d565e52ffb31cb3f84c04e0cebbb15c1d
spheron 38989832381639474084a75fd97e82a4290070ea
vast 01b8cdda287814b30ff0acb49746cca19fbd4355
yotta 2811459e36ef1eba8a62a6d42a3284a0bd635c49"""
DEFAULT_CLOUDS = {
    **{cloud: CloudPin(commit=commit) for cloud, commit in (p.split() for p in _PINS.splitlines())},
    "azure": CloudPin(commit="20291d7eda23e6f420cd9586558cf0bc4051851c",
                      base_url="https://raw.githubusercontent.com/coopslarhette/skypilot-catalog"),
    "verda": CloudPin(commit="1ae1c5fb141a720e5ca55b14695e0162770b4442",
                      base_url="https://raw.githubusercontent.com/huksley/skypilot-catalog"),
}


class CloudPricesConfig(SourceConfig):
    """The SkyPilot catalog: one pinned commit per cloud. Off unless the sources file turns it
    on (a sources file written before this source existed must not start fetching it)."""

    enabled: bool = False
    base_url: str = Field(CATALOG, description="Raw file base of skypilot-org/skypilot-catalog.")
    clouds: dict[str, CloudPin] = Field(default_factory=lambda: dict(DEFAULT_CLOUDS))
    rules: str | None = Field(None, description="Accelerator rules (unset: the checkout's own "
                              "data/cloud_accelerators.yaml).")
    commits_api: str = Field("https://api.github.com/repos/skypilot-org/skypilot-catalog/commits",
                             description="GitHub's commits API of the catalog "
                             "(perfledger backfill-prices lists a window's commits there).")
    builtin_mirror: bool = Field(True, description="When a cloud's file cannot be fetched, read "
                                 "the sample perfledger carries for that commit, if any.")

    @field_validator("clouds", mode="before")
    @classmethod
    def _plain_commits(cls, clouds: object) -> object:
        """A cloud given as a bare commit uses the section's base_url."""
        if isinstance(clouds, dict):
            return {c: {"commit": v} if isinstance(v, str) else v for c, v in clouds.items()}
        return clouds


def cloud_url(cfg: CloudPricesConfig, cloud: str, commit: str) -> str:
    """The raw URL of one cloud's file at one commit."""
    base = (cfg.clouds[cloud].base_url if cloud in cfg.clouds else None) or cfg.base_url
    return f"{base.rstrip('/')}/{commit}/{CATALOG_PATH.format(cloud=cloud)}"


def cloud_rules(ctx: LoadContext, cfg: CloudPricesConfig) -> Rules:
    """The accelerator rules the sources file names, else the checkout's own."""
    return read_rules(Path(ctx.resolve(cfg.rules)) if cfg.rules
                      else CURATED_DATA / "cloud_accelerators.yaml")


def load(ctx: LoadContext) -> None:
    """Every configured cloud on its own; the source fails only when every cloud does."""
    cfg = ctx.config
    assert isinstance(cfg, CloudPricesConfig)
    rules = cloud_rules(ctx, cfg)
    written = 0
    for cloud, pin in cfg.clouds.items():
        detail: dict = {"commit": pin.commit}
        ctx.outcome.details[cloud] = detail
        newer = _behind(ctx, cloud, pin.commit)
        if newer is not None:
            detail["status"] = SourceStatus.unchanged
            ctx.outcome.warnings.append(
                f"{SOURCE} {cloud}: the pinned commit {pin.commit[:12]} is older than prices "
                f"already stored (holding from {newer:%Y-%m-%d %H:%M} UTC: a backfill, or a "
                "later pin); not read again, so they stay current: pin the newest commit")
            continue
        try:
            written += load_cloud(ctx, cfg, cloud, pin.commit, rules, detail)
        except PerfledgerError as e:
            detail.update(status=SourceStatus.failed, message=str(e))
            ctx.outcome.stale[cloud] = re.sub(rf"^{SOURCE}(?: {cloud})?:\s*", "", str(e))
            if not scalar(ctx.reader, "SELECT count(*) FROM cloud_price WHERE cloud = ?",
                          [cloud]):
                ctx.outcome.unloaded.add(cloud)
    if ctx.outcome.stale and len(ctx.outcome.stale) == len(cfg.clouds):
        raise SourceError("; ".join(f"{c}: {why}" for c, why in ctx.outcome.stale.items()),
                          source=SOURCE)
    ctx.outcome.finish(written)


def _behind(ctx: LoadContext, cloud: str, commit: str) -> datetime | None:
    """When prices newer than the pinned ``commit``'s are stored for ``cloud`` (a backfill
    past the pin, or a pin moved back): when they hold from. Reading the pin again would
    version its older prices as a change dated now, the current price reverted."""
    [(pinned, newest)] = ctx.reader.execute(  # an aggregate: one row
        "SELECT max(valid_from) FILTER (WHERE catalog_commit = ?), max(valid_from) "
        "FROM cloud_price WHERE cloud = ?", [commit, cloud]).fetchall()
    return newest if pinned is not None and newest > pinned else None


def load_cloud(ctx: LoadContext, cfg: CloudPricesConfig, cloud: str, commit: str,
               rules: Rules, detail: dict, *, observed: datetime | None = None) -> int:
    """One cloud's file at ``commit``: the rows written (0 when unchanged). ``observed`` is
    when its prices held (a backfill passes the commit's date); default now."""
    observed = observed or ctx.now()
    parser = f"{PARSER_VERSION}+rules:{rules.sha256[:12]}"  # new rules: the file is read again
    prev = ctx.previous(SOURCE, cloud)
    raw, copy = fetch_or_carried(ctx, cloud_url(cfg, cloud, commit), SOURCE, prev,
                                 request=f"{commit}/{CATALOG_PATH.format(cloud=cloud)}",
                                 mirror=cfg.builtin_mirror)
    detail["url"] = redact(raw.url)
    if copy is not None:
        detail["source"] = raw.url
    fresh = ctx.to_parse(raw, prev, parser)
    if fresh is None:
        detail["status"] = SourceStatus.unchanged
        return 0
    raw = fresh
    notes: list[str] = []
    sid = ctx.snapshot_id(raw, cloud)
    # the whole file read before any write, held column by column (a list of row dicts takes
    # far more memory)
    columns: dict[str, list] = {}
    for row in parse(raw.body, cloud=cloud, commit=commit, rules=rules, snapshot_id=sid,
                     observed_at=observed, notes=notes):
        for name, value in row.items():
            columns.setdefault(name, []).append(value)
    read = len(columns.get("id", ()))
    ctx.outcome.warnings.extend(f"{SOURCE} {cloud}: {n}" for n in notes)
    old = scalar(ctx.reader, "SELECT count(*) FROM cloud_price WHERE cloud = ? AND "
                 "valid_to IS NULL", [cloud]) or 0
    ctx.check_shrink(f"{SOURCE} {cloud}", old, read)
    ctx.check_growth(f"{SOURCE} {cloud}", old, read)
    ctx.changing()
    ctx.record(raw, kind="catalog_csv", label=cloud, parser_version=parser)
    con = ctx.con
    con.execute("CREATE OR REPLACE TEMP TABLE _cloud_read AS "
                "SELECT *, 0::BIGINT AS ord FROM cloud_price LIMIT 0")
    insert_columns(con, "_cloud_read", columns | {"ord": list(range(read))})
    mapping = ("accelerator_id", "accelerators", "accelerator_match", "accelerator_candidates")
    [(remapped,)] = con.execute(  # a rules change re-maps the versions that stay open
        f"UPDATE cloud_price c SET {', '.join(f'{m} = n.{m}' for m in mapping)} "  # noqa: S608
        "FROM _cloud_read n WHERE c.price_key = n.price_key AND c.valid_to IS NULL AND ("
        + " OR ".join(f"c.{m} IS DISTINCT FROM n.{m}" for m in mapping) + ")").fetchall()
    counts, gone = version(con, "cloud_price", "_cloud_read", observed=observed,
                           same=("published_price", "refused"), scope="cloud = $cloud",
                           scope_params={"cloud": cloud}, ordinal_ids=True)
    added = counts.get("new", 0) + counts.get("changed", 0)
    changed = added + counts.get("changed", 0) + gone + remapped
    detail.update(status=SourceStatus.updated if changed else SourceStatus.unchanged,
                  rows=read, new_versions=added, closed_versions=counts.get("changed", 0),
                  delisted=gone, remapped=remapped, unchanged=counts.get("same", 0))
    return changed
