"""Per-source loaders: fetch → raw store → parse → replace that source's rows in staging.

Each loader receives a ``LoadContext`` (staging connection, HTTP client, settings) and fills
its ``SourceOutcome``. A loader raises a ``PerfledgerError`` to fail its source; the refresh
rolls back that source's changes, so its last good rows stay in the new snapshot.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import duckdb
import httpx

from ingest import azure_prices, curated, mlperf, mlperf_rules
from ingest.http import Raw, RetryPolicy, redact
from warehouse.db import fetch_dicts, insert_rows, scalar
from warehouse.exceptions import ParseError, ShrinkError
from warehouse.sources import SourcesConfig
from warehouse.staging import Staging
from warehouse.store import Layout


@dataclass
class SourceOutcome:
    """What happened to one source in one refresh."""

    source: str
    status: str = "pending"  # updated, unchanged, failed, skipped
    rows: int = 0
    bytes_fetched: int = 0
    seconds: float = 0.0
    fetch_seconds: float = 0.0  # of ``seconds``: reading the source (and storing its bytes)
    message: str = ""
    warnings: list[str] = field(default_factory=list)
    details: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        """JSON-ready form for the run record."""
        return {"source": self.source, "status": self.status, "rows": self.rows,
                "bytes_fetched": self.bytes_fetched, "seconds": round(self.seconds, 3),
                "fetch_seconds": round(self.fetch_seconds, 3),
                "message": self.message, "warnings": self.warnings, "details": self.details}


@dataclass
class LoadContext:
    """Everything a loader needs; nothing global."""

    stage: Staging
    client: httpx.Client
    layout: Layout
    sources: SourcesConfig
    policy: RetryPolicy
    outcome: SourceOutcome
    shrink_ratio: float = 0.5
    accept_shrink: bool = False
    today: str = ""
    changing: Callable[[], None] = lambda: None  # a loader calls it once it knows rows will change
    _pending: list[dict] = field(default_factory=list)

    @property
    def con(self) -> duckdb.DuckDBPyConnection:
        """The staging connection, for writes (the first use stages a copy of the current
        snapshot) and for reads after a write."""
        return self.stage.connection()

    @property
    def reader(self) -> duckdb.DuckDBPyConnection:
        """For reading the previous state before deciding to write: staging once open, else
        the current snapshot, read-only."""
        return self.stage.reader()

    @contextmanager
    def fetching(self) -> Iterator[None]:
        """Time a fetch: the source's seconds are reported as fetching and the rest."""
        started = time.perf_counter()
        try:
            yield
        finally:
            self.outcome.fetch_seconds += time.perf_counter() - started

    def conditional(self, prev: dict | None) -> dict[str, str | None]:
        """ETag / Last-Modified of the previous fetch, for a conditional request."""
        return {"etag": prev["etag"] if prev else None,
                "last_modified": prev["last_modified"] if prev else None}

    def previous(self, source: str, label: str | None) -> dict | None:
        """The latest source snapshot recorded for this source and label."""
        rows = fetch_dicts(
            self.reader,
            "SELECT * FROM source_snapshot WHERE source = ? AND label IS NOT DISTINCT FROM ? "
            "ORDER BY fetched_at DESC LIMIT 1", [source, label])
        return rows[0] if rows else None

    def record(self, raw: Raw, *, kind: str, label: str | None, parser_version: str,
               defer: bool = False) -> str:
        """Save the raw bytes, record the source snapshot, return its id. With ``defer`` the
        row is queued and written by ``flush_snapshots`` (one bulk insert for many pages; its
        URL is redacted then, as most queued rows are dropped unwritten)."""
        sha = raw.sha256
        snapshot_id = hashlib.sha256(
            f"{raw.source}\x1f{label}\x1f{sha}".encode()).hexdigest()[:16]
        raw_path = self.layout.save_raw(raw.body, sha)
        self.outcome.bytes_fetched += len(raw.body)
        row = {"id": snapshot_id, "source": raw.source, "kind": kind, "label": label,
               "url": raw.url if defer else redact(raw.url), "fetched_at": raw.fetched_at, "sha256": sha,
               "byte_size": len(raw.body), "etag": raw.etag, "last_modified": raw.last_modified,
               "parser_version": parser_version, "raw_path": raw_path}
        if defer:
            self._pending.append(row)
        elif not scalar(self.con, "SELECT count(*) FROM source_snapshot WHERE id = ?",
                        [snapshot_id]):
            insert_rows(self.con, "source_snapshot", [row])
        return snapshot_id

    def flush_snapshots(self) -> None:
        """Write the queued source snapshot rows that are not recorded yet."""
        if not self._pending:
            return
        ids = [r["id"] for r in self._pending]
        known = {r[0] for r in self.con.execute(
            "SELECT id FROM source_snapshot WHERE id IN (SELECT unnest(?::VARCHAR[]))",
            [ids]).fetchall()}
        fresh = {r["id"]: {**r, "url": redact(r["url"])} for r in self._pending
                 if r["id"] not in known}
        insert_rows(self.con, "source_snapshot", fresh.values())
        self._pending.clear()

    def discard_snapshots(self) -> None:
        """Forget the queued source snapshot rows (their source turned out unchanged)."""
        self._pending.clear()

    def check_shrink(self, what: str, old: int, new: int) -> None:
        """Refuse a source that suddenly returns far fewer rows (unless accepted)."""
        if old and new < old * self.shrink_ratio and not self.accept_shrink:
            raise ShrinkError(
                f"{what}: {new} rows where the last good refresh had {old} "
                f"(fewer than {self.shrink_ratio:.0%}); looks like a broken source — "
                "rerun with --accept-shrink if it is real")


def load_mlperf(ctx: LoadContext) -> None:
    """Each configured round: fetch the summary CSV, and replace that round's rows if it changed."""
    cfg = ctx.sources.mlperf
    updated = 0
    for round_name, url in cfg.rounds.items():
        url = ctx.sources.resolve(url)
        prev = ctx.previous(mlperf.SOURCE, round_name)
        started = time.perf_counter()
        with ctx.fetching():
            raw = mlperf.fetch(ctx.client, url, policy=ctx.policy, **ctx.conditional(prev))
        detail: dict = {"url": redact(url), "fetch_seconds": round(time.perf_counter() - started, 3)}
        ctx.outcome.details[round_name] = detail
        if raw.not_modified or (prev and prev["sha256"] == raw.sha256):
            detail["status"] = "unchanged (304)" if raw.not_modified else "unchanged (same sha256)"
            continue
        snapshot_id = ctx.record(raw, kind="mlperf_summary", label=round_name,
                                 parser_version=mlperf.PARSER_VERSION)
        report = mlperf.ParseReport()
        started = time.perf_counter()
        rows = list(mlperf.parse(raw, snapshot_id=snapshot_id, report=report))
        detail["parse_seconds"] = round(time.perf_counter() - started, 3)
        ctx.outcome.warnings.extend(report.warnings)
        wrong_round = {r["round"] for r in rows} - {round_name}
        if wrong_round:
            ctx.outcome.warnings.append(
                f"mlperf: {round_name} file has rows for round(s) {sorted(wrong_round)}; "
                "kept under their published version")
        rounds = sorted({r["round"] for r in rows} | {round_name})
        marks = ",".join("?" * len(rounds))
        old = scalar(ctx.con, f"SELECT count(*) FROM mlperf_result WHERE round IN ({marks})",  # noqa: S608
                     rounds)
        ctx.check_shrink(f"mlperf {round_name}", old, len(rows))
        ctx.con.execute(f"DELETE FROM mlperf_result WHERE round IN ({marks})", rounds)  # noqa: S608
        insert_rows(ctx.con, "mlperf_result", rows)
        detail.update(status="updated", rows=len(rows), sha256=raw.sha256)
        updated += len(rows)
    ctx.outcome.rows = updated
    ctx.outcome.status = "updated" if updated else "unchanged"


def load_curated(ctx: LoadContext) -> None:
    """The curated files: all checked first; any bad file fails the source and loads nothing."""
    from pathlib import Path

    directory = Path(ctx.sources.resolve(ctx.sources.curated.dir))
    with ctx.fetching():
        raws = curated.read_files(directory)
    unchanged = all((p := ctx.previous(curated.SOURCE, Path(r.url).name)) and p["sha256"] == r.sha256
                    for r in raws)
    ctx.outcome.details["files"] = {Path(r.url).name: r.sha256[:12] for r in raws}
    if unchanged:
        return
    parsed = {Path(r.url).name: curated.load(r) for r in raws}
    snapshots = {Path(r.url).name: ctx.record(r, kind="curated_file", label=Path(r.url).name,
                                              parser_version=curated.PARSER_VERSION)
                 for r in raws}
    tables = curated.rows(parsed, snapshots)
    _keep_claim_history(ctx, tables["claim"])
    for table in ("claim", "hardware", "hardware_spec", "model_shape", "accelerator_alias"):
        old = scalar(ctx.con, f"SELECT count(*) FROM {table}")  # noqa: S608
        ctx.check_shrink(f"curated {table}", old, len(tables[table]))
        ctx.con.execute(f"DELETE FROM {table}")  # noqa: S608 - fixed table names
        insert_rows(ctx.con, table, tables[table])
    ctx.outcome.rows = sum(len(v) for v in tables.values())
    ctx.outcome.status = "updated"


def _keep_claim_history(ctx: LoadContext, new_claims: list[dict]) -> None:
    """Before claims are replaced: keep each edited claim's old version and each withdrawn
    claim, with the dates, in claim_history."""
    import json
    from datetime import UTC, datetime

    compared = ("vendor", "product", "model", "metric", "value", "unit", "evidence", "claimed_on",
                "checked_on", "source_url", "quote", "conditions", "accelerator_id", "note")
    new = {c["id"]: c for c in new_claims}
    now = datetime.now(UTC)
    history = []
    for old in fetch_dicts(ctx.con, "SELECT c.*, s.fetched_at AS _fetched FROM claim c "
                                    "LEFT JOIN source_snapshot s ON s.id = c.source_snapshot_id"):
        fresh = new.get(old["id"])
        if fresh is not None and all(str(fresh[k]) == str(old[k]) for k in compared):
            continue
        fetched = old.pop("_fetched")
        history.append({
            "id": f"{old['id']}@{now.isoformat()}", "claim_id": old["id"],
            "status": "withdrawn" if fresh is None else "edited", "valid_from": fetched,
            "valid_to": now, "value": old["value"], "evidence": old["evidence"],
            "claimed_on": old["claimed_on"], "checked_on": old["checked_on"],
            "version": json.dumps(old, default=str), "source_snapshot_id": old["source_snapshot_id"]})
    insert_rows(ctx.con, "claim_history", history)
    ctx.outcome.details["claims_edited"] = sum(h["status"] == "edited" for h in history)
    ctx.outcome.details["claims_withdrawn"] = sum(h["status"] == "withdrawn" for h in history)


def load_rules(ctx: LoadContext) -> None:
    """The MLPerf rules document: every version's limits are kept; pins choose one per round."""
    cfg = ctx.sources.mlperf_rules
    url = ctx.sources.resolve(cfg.url)
    prev = ctx.previous(mlperf_rules.SOURCE, "rules")
    with ctx.fetching():
        raw = mlperf_rules.fetch(ctx.client, url, policy=ctx.policy, **ctx.conditional(prev))
    ctx.outcome.details["url"] = redact(url)
    pins = [{"round": r, "sha256": sha} for r, sha in cfg.round_pins.items()]
    current_pins = sorted(tuple(r) for r in ctx.reader.execute(
        "SELECT round, sha256 FROM rule_pin").fetchall())
    pins_changed = current_pins != sorted((p["round"], p["sha256"]) for p in pins)
    if pins_changed:
        ctx.con.execute("DELETE FROM rule_pin")
        insert_rows(ctx.con, "rule_pin", pins)
    if raw.not_modified or (prev and prev["sha256"] == raw.sha256):
        ctx.outcome.status = "updated" if pins_changed else "unchanged"
        return
    snapshot_id = ctx.record(raw, kind="rules_document", label="rules",
                             parser_version=mlperf_rules.PARSER_VERSION)
    rows = list(mlperf_rules.parse(raw, snapshot_id=snapshot_id))
    if prev:
        old = scalar(ctx.con, "SELECT count(*) FROM benchmark_rule WHERE source_snapshot_id = ?",
                     [prev["id"]])
        ctx.check_shrink("mlperf_rules", old, len(rows))
    ctx.con.execute("DELETE FROM benchmark_rule WHERE source_snapshot_id = ?", [snapshot_id])
    insert_rows(ctx.con, "benchmark_rule", rows)
    ctx.outcome.rows = len(rows)
    ctx.outcome.details["sha256"] = raw.sha256
    ctx.outcome.status = "updated"


def load_azure(ctx: LoadContext) -> None:
    """Every GPU VM price page; prices versioned (a change closes the old version and opens a
    new one, an item that disappears is marked unlisted). All pages or nothing.

    Two passes: every page is fetched and stored first; when the pages are byte-for-byte the
    ones the current rows were built from (``source_state``), nothing is parsed. Otherwise the
    stored pages are parsed one at a time into a work table and the versions are computed in
    SQL, so memory does not grow with the price list.
    """
    from datetime import UTC, datetime

    cfg = ctx.sources.azure_prices
    url = ctx.sources.resolve(cfg.url)
    observed = datetime.now(UTC)
    notes: list[str] = []
    walk: dict = {}
    pages: list[tuple[str, str]] = []  # (sha256, source snapshot id), in page order
    with ctx.fetching():
        for raw in azure_prices.fetch_pages(
                ctx.client, url, api_version=cfg.api_version, currency=cfg.currency,
                odata_filter=azure_prices.build_filter(cfg.filter, cfg.regions), policy=ctx.policy,
                max_pages=cfg.max_pages, notes=notes, concurrency=cfg.concurrency, walk=walk):
            sid = ctx.record(raw, kind="azure_page", label=f"page {len(pages) + 1}",
                             parser_version=azure_prices.PARSER_VERSION, defer=True)
            pages.append((raw.sha256, sid))
    ctx.outcome.warnings.extend(notes)
    digest = hashlib.sha256("\n".join([azure_prices.PARSER_VERSION, *(sha for sha, _ in pages)])
                            .encode()).hexdigest()
    ctx.outcome.details.update(pages=len(pages), digest=digest, notes=notes, walk=walk)
    if scalar(ctx.reader, "SELECT digest FROM source_state WHERE source = ?",
              [azure_prices.SOURCE]) == digest:
        ctx.discard_snapshots()  # the run that stored this digest recorded these pages
        ctx.outcome.details["parsed"] = False
        ctx.outcome.status = "unchanged"
        return
    ctx.outcome.details["parsed"] = True
    ctx.flush_snapshots()
    ctx.changing()

    def rows():
        order = 0
        for number, (sha, sid) in enumerate(pages, start=1):
            raw = Raw(source=azure_prices.SOURCE, url=url, body=ctx.layout.raw_path(sha).read_bytes(),
                      fetched_at=observed)
            for row in azure_prices.parse(raw, page=number, snapshot_id=sid, observed_at=observed):
                if row["currency"] != cfg.currency:
                    raise ParseError(f"azure_prices: page {number}: {row['arm_sku_name']} is "
                                     f"priced in {row['currency']}, not the configured "
                                     f"{cfg.currency}", source=azure_prices.SOURCE)
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
    ctx.check_shrink("azure_prices", open_count, items)

    # Per item (the first occurrence of a price key wins: the API repeats an item across pages
    # at times): same as its open version, changed, or new. A changed price opens at its
    # effective start when that is later than the open version's start, else when observed; a
    # new (or re-listed) item opens at its effective start, but never before its last version
    # closed, so windows never overlap. Only keys are kept here; rows stay in _azure_read.
    con.execute("""
        CREATE OR REPLACE TEMP TABLE _azure_diff AS
        SELECT n.ord, n.price_key, c.id AS open_id,
               CASE WHEN c.id IS NULL THEN 'new'
                    WHEN (c.retail_price, c.unit_price, c.effective_start)
                         = (n.retail_price, n.unit_price, n.effective_start) THEN 'same'
                    ELSE 'changed' END AS change,
               CASE WHEN c.id IS NULL THEN greatest(n.effective_start, coalesce(p.last_end, n.effective_start))
                    WHEN n.effective_start > c.valid_from THEN n.effective_start
                    ELSE $observed END AS valid_from
        FROM (SELECT ord, price_key, retail_price, unit_price, effective_start FROM _azure_read
              QUALIFY row_number() OVER (PARTITION BY price_key ORDER BY ord) = 1) n
        LEFT JOIN azure_price c ON c.price_key = n.price_key AND c.valid_to IS NULL
        LEFT JOIN (SELECT price_key, max(valid_to) AS last_end FROM azure_price
                   WHERE valid_to IS NOT NULL GROUP BY price_key) p ON p.price_key = n.price_key
    """, {"observed": observed})
    counts = dict(con.execute("SELECT change, count(*) FROM _azure_diff GROUP BY 1").fetchall())
    [gone] = con.execute(  # an UPDATE answers with the number of rows it changed
        "UPDATE azure_price SET valid_to = $observed, listed = false "
        "WHERE valid_to IS NULL AND price_key NOT IN (SELECT price_key FROM _azure_diff)",
        {"observed": observed}).fetchone() or (0,)
    con.execute("UPDATE azure_price SET valid_to = d.valid_from, listed = true FROM _azure_diff d "
                "WHERE azure_price.id = d.open_id AND d.change = 'changed'")
    con.execute("UPDATE azure_price SET last_seen_at = $observed WHERE id IN "
                "(SELECT open_id FROM _azure_diff WHERE change = 'same')", {"observed": observed})
    # Version id: the item's content id and the version's start (epoch microseconds).
    con.execute("""
        INSERT INTO azure_price BY NAME
        SELECT n.* EXCLUDE (ord) REPLACE (
                   left(sha256(n.id || chr(31) || epoch_us(d.valid_from)::VARCHAR), 16) AS id,
                   d.valid_from AS valid_from)
        FROM _azure_read n JOIN _azure_diff d USING (ord)
        WHERE d.change IN ('new', 'changed')
    """)
    con.execute("DROP TABLE _azure_read")
    con.execute("DROP TABLE _azure_diff")

    unmapped = [r[0] for r in con.execute(
        "SELECT DISTINCT arm_sku_name FROM azure_price WHERE valid_to IS NULL AND arm_sku_name NOT IN "
        "(SELECT alias FROM accelerator_alias WHERE kind = 'azure_sku') ORDER BY 1").fetchall()]
    ctx.outcome.details["unmapped_skus"] = {"count": len(unmapped), "names": unmapped}
    if unmapped:
        ctx.outcome.warnings.append(f"azure_prices: {len(unmapped)} GPU VM size(s) not mapped to "
                                    f"an accelerator: {', '.join(unmapped[:20])}"
                                    + (" …" if len(unmapped) > 20 else ""))
    inserted = counts.get("new", 0) + counts.get("changed", 0)
    ctx.outcome.details.update(new_versions=inserted, closed_versions=counts.get("changed", 0),
                               delisted=gone, unchanged=counts.get("same", 0))
    con.execute("INSERT OR REPLACE INTO source_state VALUES (?, ?, ?, ?)",
                [azure_prices.SOURCE, digest, len(pages), observed])
    ctx.outcome.rows = inserted + counts.get("changed", 0) + gone
    ctx.outcome.status = "updated" if ctx.outcome.rows else "unchanged"


def apply_aliases(con: duckdb.DuckDBPyConnection) -> dict:
    """Map each result's published accelerator name to an accelerator id via the curated aliases.

    Returns the mapping coverage: rows with an accelerator, rows mapped, names not mapped.
    """
    con.execute("""
        UPDATE mlperf_result AS r
        SET accelerator_id = a.accelerator_id,
            accelerator_vendor = coalesce(a.vendor, r.accelerator_vendor),
            accelerator_mix = a.mix
        FROM accelerator_alias AS a
        WHERE a.kind = 'mlperf_name' AND a.alias = r.accelerator_model_name
    """)
    unmapped = [r[0] for r in con.execute("""
        SELECT DISTINCT accelerator_model_name FROM mlperf_result
        WHERE accelerator_mix = 'single' AND accelerator_id IS NULL ORDER BY 1""").fetchall()]
    total, mapped = con.execute("""
        SELECT count(*) FILTER (WHERE accelerator_mix = 'single'),
               count(*) FILTER (WHERE accelerator_mix = 'single' AND accelerator_id IS NOT NULL)
        FROM mlperf_result""").fetchone() or (0, 0)
    return {"rows_with_accelerator": total, "rows_mapped": mapped, "unmapped_names": unmapped}


Loader = Callable[[LoadContext], None]
LOADERS: dict[str, Loader] = {"curated": load_curated, "mlperf": load_mlperf,
                              "mlperf_rules": load_rules, "azure_prices": load_azure}
