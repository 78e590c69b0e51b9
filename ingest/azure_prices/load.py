"""Load the Azure price list into ``azure_price``: every page or nothing, prices versioned."""

from __future__ import annotations

import hashlib
from datetime import datetime

from pydantic import Field

from ingest.azure_prices.fetch import build_filter, fetch_pages
from ingest.azure_prices.parse import PARSER_VERSION, SOURCE, parse
from ingest.context import LoadContext, SourceConfig
from ingest.http import Raw
from ingest.versions import version
from warehouse.exceptions import ParseError
from warehouse.model.vocabulary import SourceStatus
from warehouse.storage.db import insert_rows, scalar

DEFAULT_URL = "https://prices.azure.com/api/retail/prices"
DEFAULT_FILTER = "serviceName eq 'Virtual Machines' and startswith(armSkuName, 'Standard_N')"
SAME_KEPT = 8  # page digests remembered as giving the current rows (see the end of ``load``)


class AzureConfig(SourceConfig):
    """Azure Retail Prices API scope."""

    url: str = DEFAULT_URL
    api_version: str = "2023-01-01-preview"
    currency: str = "USD"
    filter: str = DEFAULT_FILTER
    regions: list[str] = Field(default_factory=list)
    max_pages: int = Field(5000, ge=1)
    # Pages fetched at once when pages mostly wait on the network (predicted from
    # NextPageLink's $skip; 1 = strictly one by one).
    concurrency: int = Field(4, ge=1, le=16)


def load(ctx: LoadContext) -> None:
    """Every GPU VM price page; prices versioned (a change closes the old version and opens a
    new one, an item that disappears is marked unlisted). All pages or nothing.

    Two passes: every page is fetched and stored first; when the pages are byte-for-byte the
    ones the current rows were built from (``source_state``), or ones a run since found to give
    the same rows (``state/azure_prices.json``), nothing is parsed. Otherwise the
    stored pages are parsed one at a time into a work table and the versions are computed in
    SQL, so memory does not grow with the price list.
    """
    cfg = ctx.config
    assert isinstance(cfg, AzureConfig)
    url = ctx.resolve(cfg.url)
    observed = ctx.now()
    pages = _fetch(ctx, cfg, url)
    digest = hashlib.sha256("\n".join([PARSER_VERSION, *(sha for sha, _ in pages)])
                            .encode()).hexdigest()
    ctx.outcome.details["digest"] = digest
    known = scalar(ctx.reader, "SELECT digest FROM source_state WHERE source = ?", [SOURCE])
    same = ctx.layout.read_state(SOURCE)  # pages parsed since that gave the rows of `known`
    remembered = same.get("digests", []) if known and same.get("same_as") == known else []
    if digest == known or digest in remembered:
        ctx.discard_snapshots()  # the run that stored this digest recorded these pages
        ctx.outcome.details["parsed"] = False
        ctx.outcome.status = SourceStatus.unchanged
        return
    ctx.outcome.details["parsed"] = True
    ctx.flush_snapshots()
    ctx.changing()
    _stage(ctx, cfg, url, pages, observed)
    counts, gone = version(ctx.con, "azure_price", "_azure_read", observed=observed,
                           same=("retail_price", "unit_price", "effective_start"))
    _report_unmapped(ctx)
    inserted = counts.get("new", 0) + counts.get("changed", 0)
    ctx.outcome.details.update(new_versions=inserted, closed_versions=counts.get("changed", 0),
                               delisted=gone, unchanged=counts.get("same", 0))
    ctx.con.execute("INSERT OR REPLACE INTO source_state VALUES (?, ?, ?, ?)",
                    [SOURCE, digest, len(pages), observed])
    ctx.outcome.rows = inserted + counts.get("changed", 0) + gone
    ctx.outcome.status = (SourceStatus.updated if ctx.outcome.rows
                          else SourceStatus.unchanged)
    if not ctx.outcome.rows and known:
        # Other bytes, the same rows (a page boundary moved, a field not kept changed): nothing
        # is published, so source_state keeps the old digest. Remember that these pages give
        # what it gave, or every later refresh would parse them all again.
        ctx.layout.write_state(SOURCE, {"same_as": known,
                                        "digests": [digest, *remembered[:SAME_KEPT - 1]]})


def _fetch(ctx: LoadContext, cfg: AzureConfig, url: str) -> list[tuple[str, str]]:
    """Fetch and store every page (its snapshot deferred): (sha256, snapshot id) in order."""
    notes: list[str] = []
    walk: dict = {}
    pages: list[tuple[str, str]] = []
    known_pages = scalar(ctx.reader, "SELECT parts FROM source_state WHERE source = ?", [SOURCE])
    with ctx.fetching():
        for raw in fetch_pages(
                ctx.client, url, api_version=cfg.api_version, currency=cfg.currency,
                odata_filter=build_filter(cfg.filter, cfg.regions), policy=ctx.policy,
                max_pages=cfg.max_pages, notes=notes, concurrency=cfg.concurrency, walk=walk,
                deadline=ctx.request_deadline, limits=ctx.limits):
            ctx.emit("progress", f"{SOURCE}: page {len(pages) + 1}"
                     + (f" of about {known_pages} (last refresh)" if known_pages else ""))
            sid = ctx.record(raw, kind="azure_page", label=f"page {len(pages) + 1}",
                             parser_version=PARSER_VERSION, defer=True)
            pages.append((raw.sha256, sid))
    ctx.outcome.warnings.extend(notes)
    ctx.outcome.details.update(pages=len(pages), digest=None, notes=notes, walk=walk)
    return pages


def _stage(ctx: LoadContext, cfg: AzureConfig, url: str, pages: list[tuple[str, str]],
           observed: datetime) -> None:
    """Parse the stored pages one at a time into the work table ``_azure_read``; warn of
    repeated items with different prices and of products whose OS is unknown; refuse a
    shrink or growth past the limits."""

    def rows():
        order = 0
        for number, (sha, sid) in enumerate(pages, start=1):
            raw = Raw(source=SOURCE, url=url, body=ctx.layout.raw_path(sha).read_bytes(),
                      fetched_at=observed)
            for row in parse(raw, page=number, snapshot_id=sid, observed_at=observed):
                if row["currency"] != cfg.currency:
                    raise ParseError(f"azure_prices: page {number}: {row['arm_sku_name']} is "
                                     f"priced in {row['currency']}, not the configured "
                                     f"{cfg.currency}", source=SOURCE)
                row["ord"] = order
                order += 1
                yield row

    con = ctx.con
    con.execute("CREATE OR REPLACE TEMP TABLE _azure_read AS "
                "SELECT *, 0::BIGINT AS ord FROM azure_price LIMIT 0")
    parsed = insert_rows(con, "_azure_read", rows(), batch=5_000)
    items = scalar(con, "SELECT count(DISTINCT price_key) FROM _azure_read")
    open_count = scalar(con, "SELECT count(*) FROM azure_price WHERE valid_to IS NULL")
    ctx.outcome.details.update(items=items, duplicates_skipped=parsed - items)
    for sku, region, kind, term, prices in con.execute("""
            SELECT any_value(arm_sku_name), any_value(arm_region_name), any_value(price_type),
                   any_value(reservation_term),
                   list(retail_price::VARCHAR || ' ' || currency || ' (item ' || ord || ')'
                        ORDER BY ord)
            FROM _azure_read GROUP BY price_key
            HAVING count(DISTINCT (retail_price, unit_price, effective_start)) > 1
            ORDER BY 1, 2""").fetchall():
        ctx.outcome.warnings.append(
            f"{SOURCE}: {sku} in {region} ({kind}{', ' + term if term else ''}) is listed "
            f"{len(prices)} times with different prices: {'; '.join(prices)}; the first was kept")
    unknown_os = [r[0] for r in con.execute(
        "SELECT DISTINCT product_name FROM _azure_read WHERE os = 'unknown' ORDER BY 1").fetchall()]
    ctx.outcome.details["unknown_os_products"] = unknown_os
    if unknown_os:
        ctx.outcome.warnings.append(
            f"{SOURCE}: {len(unknown_os)} product name(s) end in a word that names no known OS "
            f"(os = unknown, never priced unless asked): {', '.join(unknown_os[:10])}")
    ctx.check_shrink("azure_prices", open_count, items)
    ctx.check_growth("azure_prices", open_count, items)


def _report_unmapped(ctx: LoadContext) -> None:
    """Warn of current GPU VM sizes no alias maps to an accelerator."""
    unmapped = [r[0] for r in ctx.con.execute(
        "SELECT DISTINCT arm_sku_name FROM azure_price WHERE valid_to IS NULL AND arm_sku_name NOT IN "
        "(SELECT alias FROM accelerator_alias WHERE kind = 'azure_sku') ORDER BY 1").fetchall()]
    ctx.outcome.details["unmapped_skus"] = {"count": len(unmapped), "names": unmapped}
    if unmapped:
        ctx.outcome.warnings.append(f"azure_prices: {len(unmapped)} GPU VM size(s) not mapped to "
                                    f"an accelerator: {', '.join(unmapped[:20])}"
                                    + (" …" if len(unmapped) > 20 else ""))
