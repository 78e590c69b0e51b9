"""What dashboards and analysts rely on: formats, export, as_of by snapshot, and several API
workers switching to a new snapshot without a failed request."""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import duckdb
import httpx
import pyarrow.parquet as pq
import pytest

from ingest.refresh import refresh
from tests.helpers import free_port, no_op, replace_loads
from tests.test_end_to_end import wait_until_up

BIN = Path(sys.executable).parent


def test_ndjson_and_parquet_match_json(full_client):
    params = "model=deepseek-r1&sort=result&limit=1000"
    rows = full_client.get(f"/v1/results?{params}").json()["rows"]
    nd = [json.loads(line) for line in full_client.get(f"/v1/results?{params}&format=ndjson").text.splitlines()]
    assert [r["id"] for r in nd] == [r["id"] for r in rows]
    table = pq.read_table(io.BytesIO(full_client.get(f"/v1/results?{params}&format=parquet").content))
    assert table.column("id").to_pylist() == [r["id"] for r in rows]
    assert table.column("result").to_pylist() == [r["result"] for r in rows]


def test_parquet_pages_are_typed_by_the_database_and_concatenate(full_client):
    """An all-NULL column (region, sku… on the assumed basis) keeps its declared type, so the
    pages of one query concatenate; each column carries its description."""
    import pyarrow as pa

    url = "/v1/costs?basis=assumed&model=deepseek-r1&format=parquet&limit=50"
    first = full_client.get(url)
    assert first.status_code == 200 and 'rel="next"' in first.headers["link"]
    second = full_client.get(first.headers["link"].split(">")[0].lstrip("<"))
    pages = [pq.read_table(io.BytesIO(r.content)) for r in (first, second)]
    for t in pages:
        assert t.num_rows > 0 and t.column("region").null_count == t.num_rows
        assert t.schema.field("region").type == pa.string()
        assert t.schema.field("price_valid_from").type == pa.timestamp("us", tz="Etc/UTC")
        assert t.schema.field("rate_per_accelerator_hour").type == pa.float64()
    both = pa.concat_tables(pages)  # raises when the schemas differ
    rows = full_client.get(url.replace("&format=parquet", "").replace("limit=50", "limit=100")
                           ).json()["rows"]
    assert both.column("id").to_pylist() == [r["id"] for r in rows[:both.num_rows]]
    comment = pages[0].schema.field("cost_per_million_tokens").metadata[b"comment"].decode()
    from warehouse.model.public import CostPublic
    assert comment == CostPublic.model_fields["cost_per_million_tokens"].description


def test_export_reads_back_with_identical_rows_and_hashes(full_warehouse, tmp_path):
    env = {**os.environ, "PERFLEDGER_DATA_DIR": str(full_warehouse / "var")}
    out = tmp_path / "export"
    done = subprocess.run([BIN / "perfledger", "export", "--out", str(out)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    current = json.loads((full_warehouse / "var" / "CURRENT").read_text())
    assert manifest["snapshot_id"] == current["id"]
    names = {f["name"] for f in manifest["files"]}
    assert {"mlperf_result", "scenario_ratio", "claim", "azure_price", "claim_check"} <= names
    con = duckdb.connect(str(full_warehouse / "var" / "snapshots" / current["file"]), read_only=True)
    for f in manifest["files"]:
        path = out / f["file"]
        assert hashlib.sha256(path.read_bytes()).hexdigest() == f["sha256"]
        assert duckdb.sql(f"SELECT count(*) FROM '{path}'").fetchall()[0][0] == f["rows"]
    original = con.execute("SELECT id, result, units FROM mlperf_result ORDER BY id").fetchall()
    exported = duckdb.sql(f"SELECT id, result, units FROM '{out / 'mlperf_result.parquet'}' "
                          "ORDER BY id").fetchall()
    assert exported == original and len(original) == 492
    con.close()
    assert any(s["source"] == "mlperf" for s in manifest["sources"])


def publish_edited_results(settings, monkeypatch) -> None:
    """Publish a new snapshot in which every v6.1 result's notes say 'edited' (the other
    sources are left as they are)."""
    def bump(ctx):
        ctx.con.execute("UPDATE mlperf_result SET notes = 'edited' WHERE round = 'v6.1'")
        ctx.outcome.status = "updated"
    replace_loads(monkeypatch, mlperf=no_op, mlperf_rules=no_op, azure_prices=no_op, curated=bump)
    assert refresh(settings).status == "published"


def test_as_of_reads_the_snapshot_current_then(full_copy, client_for, monkeypatch):
    tmp, sources = full_copy
    from tests.conftest import make_settings
    settings = make_settings(tmp, sources)
    first_published = client_for(settings).get("/healthz").json()["published_at"]
    publish_edited_results(settings, monkeypatch)
    client = client_for(settings)
    now = client.get("/v1/results?limit=1").json()
    then = client.get("/v1/results", params={"limit": 1, "as_of": first_published}).json()
    assert now["rows"][0]["notes"] == "edited" and then["rows"][0]["notes"] != "edited"
    assert then["snapshot_id"] != now["snapshot_id"]
    early = client.get("/v1/results?as_of=2001-01-01")
    assert early.status_code == 422 and "no snapshot was published by then" in early.json()["error"]["message"]


def test_two_workers_switch_to_the_new_snapshot_without_errors(http_published, server, tmp_path):
    from tests.helpers import copy_data_dir
    src, body = http_published
    copy_data_dir(src / "var", tmp_path / "var")
    server.files["/summary.csv"] = body.replace(b'"240274.0"', b'"240555.0"')
    port = free_port()
    env = {**os.environ, "PERFLEDGER_DATA_DIR": str(tmp_path / "var"),
           "PERFLEDGER_SOURCES": str(src / "sources.toml")}
    api = subprocess.Popen([BIN / "perfledger", "serve", "--port", str(port), "--workers", "2"],
                           env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    errors: list = []
    seen_ids: list[str] = []
    stop = threading.Event()

    def poll():
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as c:
            while not stop.is_set():
                try:
                    r = c.get("/v1/results?limit=1&division=all&availability=all")
                    if r.status_code != 200 or r.json()["total"] != 492:
                        errors.append(r.status_code)
                    seen_ids.append(r.headers["x-snapshot-id"])
                except httpx.HTTPError as e:
                    errors.append(repr(e))
                time.sleep(0.01)

    try:
        wait_until_up(f"http://127.0.0.1:{port}/healthz")
        old = httpx.get(f"http://127.0.0.1:{port}/healthz").json()["snapshot_id"]
        threads = [threading.Thread(target=poll, daemon=True) for _ in range(3)]
        for t in threads:
            t.start()
        done = subprocess.run([BIN / "perfledger", "refresh"], env=env, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        new = json.loads((tmp_path / "var" / "CURRENT").read_text())["id"]
        assert new != old
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            recent = seen_ids[-60:]
            if len(recent) == 60 and set(recent) == {new}:
                break
            time.sleep(0.2)
        stop.set()
        for t in threads:
            t.join(10)
        assert errors == []
        assert set(seen_ids[-60:]) == {new} and old in seen_ids
        # each worker swaps once it has warmed the new snapshot (a few seconds apart at most);
        # then every new connection, whichever worker takes it, answers from the new one
        deadline = time.monotonic() + 60
        while True:
            answers = {httpx.get(f"http://127.0.0.1:{port}/v1/results", params={
                "min_result": 240555, "max_result": 240555}).json()["total"] for _ in range(20)}
            if answers == {1} or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert answers == {1}
    finally:
        api.terminate()
        api.wait(15)


def test_json_body_encoding_matches_the_standard_library():
    """orjson writes the bodies; the shapes must be what the standard library would write,
    with non-finite floats as null, and what orjson refuses still encodes."""
    import json as std
    from datetime import UTC, date, datetime

    from api.responses import dumps

    row = {"t": datetime(2026, 11, 1, 0, 0, tzinfo=UTC), "t_us": datetime(2026, 11, 1, 1, 2, 3, 4500, tzinfo=UTC),
           "d": date(2026, 10, 25), "x": 12.29, "n": None, "nan": float("nan"), "inf": float("-inf"),
           "s": "GB300 — “NVL72”", "i": 3521}
    got = std.loads(dumps({"rows": [row]}))["rows"][0]
    assert got == {"t": "2026-11-01T00:00:00+00:00", "t_us": "2026-11-01T01:02:03.004500+00:00",
                   "d": "2026-10-25", "x": 12.29, "n": None, "nan": None, "inf": None,
                   "s": "GB300 — “NVL72”", "i": 3521}
    assert std.loads(dumps({"big": 2**70, 3: "int key"})) == {"big": 2**70, "3": "int key"}


def test_cached_answers_follow_the_snapshot_and_never_mix_as_of(full_copy, client_for, monkeypatch):
    """Repeated GETs are answered from the response cache before routing: same body and
    headers, 304 on the ETag; a newly published snapshot is answered fresh; an ``as_of``
    request is never given the current snapshot's cached body."""
    tmp, sources = full_copy
    from tests.conftest import make_settings
    settings = make_settings(tmp, sources)
    client = client_for(settings)
    url = "/v1/results?limit=1&sort=id"
    first, again = client.get(url), client.get(url)
    assert first.content == again.content
    for h in ("etag", "x-snapshot-id", "cache-control", "last-modified", "content-type"):
        assert first.headers[h] == again.headers[h]
    revalidated = client.get(url, headers={"If-None-Match": first.headers["etag"]})
    assert revalidated.status_code == 304 and revalidated.headers["etag"] == first.headers["etag"]
    assert client.get(url, headers={"Accept": "text/csv"}).text.startswith("id,")
    published = client.get("/healthz").json()["published_at"]
    publish_edited_results(settings, monkeypatch)
    after = client.get(url)
    assert after.json()["rows"][0]["notes"] == "edited"
    assert after.headers["etag"] != first.headers["etag"]
    assert client.get(url, headers={"If-None-Match": first.headers["etag"]}).status_code == 200
    for _ in range(2):
        then = client.get("/v1/results", params={"limit": 1, "sort": "id", "as_of": published}).json()
        assert then["rows"][0]["notes"] != "edited" and then["snapshot_id"] == first.json()["snapshot_id"]
    assert client.get(url).json()["rows"][0]["notes"] == "edited"


def test_one_request_answers_from_the_one_snapshot_it_read_first(full_copy, client_for):
    """A publish between two reads of one request (here: right after its first) mixes nothing:
    /v1/costs takes its default bases and its rows (and the response cache its key) from the
    snapshot the request read first; the next request reads the new one."""
    from tests.api.test_corrupt_snapshot import _second_snapshot
    from tests.conftest import make_settings

    tmp, sources = full_copy
    client = client_for(make_settings(tmp, sources))
    old = client.get("/v1/results?limit=1").json()["snapshot_id"]
    reader = client.app.state.reader
    read = reader.get
    published: list[str] = []

    def publish_after_the_first_read():
        opened = read()
        if not published:
            published.append(_second_snapshot(tmp)[1])
        return opened

    reader.get = publish_after_the_first_read
    first = client.get("/v1/costs?model=deepseek-r1")
    assert first.status_code == 200 and published
    assert first.json()["snapshot_id"] == first.headers["x-snapshot-id"] == old
    after = client.get("/v1/costs?model=deepseek-r1")
    assert after.json()["snapshot_id"] == after.headers["x-snapshot-id"] == published[0] != old


def test_a_request_finishes_on_its_snapshot_across_two_publishes(full_copy, client_for):
    """Two publishes while one request runs (the reader swaps twice, for other requests): the
    request still answers from the snapshot it read first, which closes once it is done."""
    from tests.api.test_corrupt_snapshot import _second_snapshot
    from tests.conftest import make_settings

    tmp, sources = full_copy
    client = client_for(make_settings(tmp, sources))
    old = client.get("/v1/results?limit=1").json()["snapshot_id"]
    reader = client.app.state.reader
    read = reader.get
    held: list = []
    published: list[str] = []

    def another_request_reads() -> None:  # a thread of its own: no request's holder
        done = threading.Thread(target=read)
        done.start()
        done.join()

    def two_publishes_after_the_first_read():
        opened = read()
        if not held:
            held.append(opened)
            for _ in range(2):
                published.append(_second_snapshot(tmp)[1])
                another_request_reads()
        return opened

    reader.get = two_publishes_after_the_first_read
    slow = client.get("/v1/costs?model=deepseek-r1")
    reader.get = read
    assert len(published) == 2 and read().id == published[1]
    assert slow.status_code == 200, slow.text
    assert slow.json()["snapshot_id"] == slow.headers["x-snapshot-id"] == old
    assert held[0].retired
    for closing in [t for t in threading.enumerate() if t.name == f"close {old}"]:
        closing.join(30)
    with pytest.raises(duckdb.ConnectionException):  # closed once its request was done
        held[0].con.execute("SELECT 1")
    assert client.get("/v1/costs?model=deepseek-r1").json()["snapshot_id"] == published[1]
