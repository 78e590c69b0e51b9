"""Refresh end to end against a real local HTTP server: publish, unchanged, and faults that
must leave the previous snapshot serving unchanged."""

from __future__ import annotations

import csv
import hashlib
import io
import json

import duckdb
import pytest

from ingest.refresh import refresh
from tests.conftest import make_settings, write_sources
from tests.helpers import Reply, copy_data_dir
from warehouse.storage.store import Layout


def served_rows(client) -> list[dict]:
    rows, url = [], "/v1/results?limit=1000&division=all&availability=all"
    while url:
        body = client.get(url).json()
        rows += body["rows"]
        url = body["next"]
    return rows


@pytest.fixture
def published(http_published, server, tmp_path):
    """A private copy of a warehouse published from the real CSV served over HTTP."""
    src, body = http_published
    copy_data_dir(src / "var", tmp_path / "var")
    server.files["/summary.csv"] = body
    return make_settings(tmp_path, src / "sources.toml"), body


def test_refresh_over_http_publishes_every_row_with_its_source(published, client_for):
    settings, body = published
    client = client_for(settings)
    rows = served_rows(client)
    assert len(rows) == 492
    sha = hashlib.sha256(body).hexdigest()
    assert {r["source_sha256"] for r in rows} == {sha}
    assert {r["evidence"] for r in rows} == {"measured"}
    raw = Layout(settings.data_path).raw_path(sha)
    assert raw.read_bytes() == body


def test_second_refresh_is_unchanged_and_conditional(published, server):
    settings, _ = published
    layout = Layout(settings.data_path)
    before = layout.read_current()
    report = refresh(settings)
    assert report.status == "unchanged" and report.exit_code == 0
    assert report.sources[0].details["v6.1"]["status"] == "unchanged (304)"
    second = server.hits("/summary.csv")[-1]
    assert second.headers.get("if-none-match")
    assert layout.read_current() == before
    assert len(list(layout.snapshots.glob("*.duckdb"))) == 1


def test_same_bytes_without_etag_is_unchanged_too(published, server):
    settings, body = published
    server.files.pop("/summary.csv")
    server.handlers["/summary.csv"] = lambda req: Reply(200, body)
    report = refresh(settings)
    assert report.status == "unchanged"
    assert report.sources[0].details["v6.1"]["status"] == "unchanged (same sha256)"


def test_500_then_200_is_retried_and_published(published, server):
    settings, body = published
    changed = body.replace(b'"240274.0"', b'"240275.0"')
    server.scripts["/summary.csv"].extend([Reply(500), Reply(200, changed)])
    report = refresh(settings)
    assert report.status == "published", report.message
    con = duckdb.connect(str(Layout(settings.data_path).read_current().path), read_only=True)
    assert con.execute("SELECT count(*) FROM mlperf_result WHERE result = 240275").fetchone()[0] == 1
    con.close()


def _garbage(body: bytes) -> bytes:
    lines = body.split(b"\n")
    lines[10] = b'"NVIDIA","available",garbage'
    return b"\n".join(lines)


def _drop_column(body: bytes) -> bytes:
    text = body.decode()
    return text.replace("Units,", "Unitz,", 1).encode()


FAULTS = {
    "always 500": (lambda body: [Reply(500)] * 3, "HTTP 500 after 3 attempt"),
    "truncated body": (lambda body: [Reply(200, body, truncate=len(body) // 2)] * 3,
                       "failed after 3 attempt"),
    "truncated file": (lambda body: [Reply(200, body[: len(body) // 2])],
                       "unexpected end of data (is the file truncated?)"),
    "column removed": (lambda body: [Reply(200, _drop_column(body))],
                       "required column(s) missing: Units"),
    "garbage row": (lambda body: [Reply(200, _garbage(body))], "line 11 has 3 fields"),
    "shrunk to 10 rows": (lambda body: [Reply(200, b"\n".join(body.split(b"\n")[:11]))],
                          "10 rows where the last good refresh had 492"),
}


@pytest.mark.parametrize("fault", FAULTS)
def test_fault_keeps_previous_snapshot_serving(published, server, client_for, fault):
    settings, body = published
    replies, message = FAULTS[fault]
    server.scripts["/summary.csv"].extend(replies(body))
    client = client_for(settings)
    before = served_rows(client)
    current = Layout(settings.data_path).read_current()

    report = refresh(settings)

    assert report.status == "failed" and report.exit_code == 1
    assert message in report.sources[0].message, report.sources[0].message
    assert "mlperf" in report.message
    assert Layout(settings.data_path).read_current() == current
    assert served_rows(client) == before
    runs = client.get("/v1/refreshes").json()["rows"]
    assert runs[0]["status"] == "failed" and message in runs[0]["sources"][0]["message"]
    health = client.get("/healthz").json()
    mlperf = {s["source"]: s for s in health["sources"]}["mlperf"]
    assert mlperf["state"] == "stale" and mlperf["stale"] is True and mlperf["stale_since"] is not None
    assert not list(Layout(settings.data_path).snapshots.glob("*.partial"))


def test_shrink_can_be_accepted(published, server):
    settings, body = published
    server.scripts["/summary.csv"].append(Reply(200, b"\n".join(body.split(b"\n")[:11])))
    report = refresh(settings, accept_shrink=True)
    assert report.status == "published"


def csv_rows(body: bytes) -> int:
    """Data rows of a CSV file, counted by the csv module (quoted newlines included)."""
    return sum(1 for row in csv.reader(io.StringIO(body.decode("utf-8-sig"))) if row) - 1


def test_run_record_is_json_with_stages_and_bytes(published):
    settings, body = published
    runs = Layout(settings.data_path).read_runs()
    run = runs[-1]
    layout = Layout(settings.data_path)
    on_disk = json.loads((layout.runs / f"{run['id']}.json").read_text())
    assert on_disk == run  # the record file is the journal entry, as JSON
    assert run["status"] == "published" and run["snapshot_id"] == layout.read_current().id
    [mlperf] = run["sources"]
    assert sorted(run["disabled"]) == ["azure_prices", "cloud_prices", "curated", "inferencex",
                                       "mlperf_rules"]
    assert mlperf["source"] == "mlperf" and mlperf["status"] == "updated"
    assert mlperf["bytes_fetched"] == len(body) and mlperf["rows"] == csv_rows(body)
    assert set(run["stages"]) >= {"stage", "derive", "validate", "publish"}
    assert all(isinstance(v, float) and v >= 0 for v in run["stages"].values())
    assert run["started_at"] < run["finished_at"]
    assert run["validation"] and all(set(v) >= {"expectation", "success", "severity"}
                                     for v in run["validation"])


def test_first_run_with_unreachable_source_publishes_nothing(tmp_path, client_for):
    sources = write_sources(tmp_path / "sources.toml",
                            mlperf='rounds = { "v6.1" = "http://127.0.0.1:9/summary.csv" }')
    settings = make_settings(tmp_path, sources, http_retries=0)
    report = refresh(settings)
    assert report.status == "failed" and "127.0.0.1:9" in report.message
    client = client_for(settings)
    body = client.get("/v1/results").json()
    assert body["total"] == 0 and body["snapshot_id"] is None
    assert client.get("/healthz").json()["status"] == "empty"


def _result_of(settings, value_filter: str) -> int:
    con = duckdb.connect(str(Layout(settings.data_path).read_current().path), read_only=True)
    try:
        return con.execute(f"SELECT count(*) FROM mlperf_result WHERE {value_filter}").fetchone()[0]
    finally:
        con.close()


def test_a_revert_upstream_publishes_every_time(published, server, client_for):
    """A → B → A → B: each refresh publishes what the server sent (bytes seen before are a
    change when they differ from the last fetch), conditional requests included; /healthz
    is ok after each."""
    settings, a = published
    b = a.replace(b'"240274.0"', b'"240275.0"')
    layout = Layout(settings.data_path)
    published_ids = []
    for step, (body, value) in enumerate([(b, 240275), (a, 240274), (b, 240275), (a, 240274)]):
        server.files["/summary.csv"] = body
        report = refresh(settings)
        assert report.status == "published", (step, report.status, report.message)
        assert _result_of(settings, f"result = {value}") == 1, step
        published_ids.append(layout.read_current().id)
        assert client_for(settings).get("/healthz").json()["status"] == "ok"
    report = refresh(settings)  # and the same bytes again: unchanged, asked conditionally
    assert report.status == "unchanged"
    assert report.sources[0].details["v6.1"]["status"] == "unchanged (304)"
    assert len(set(published_ids)) == 4


def test_a_rules_document_revert_is_served(tmp_path, server, client_for):
    """The rules document's current version is the last one fetched: A → B → A serves A."""
    from tests.helpers import RULES_ADOC

    a = RULES_ADOC.read_text()
    b = a.replace("TTFT/TPOT: 2000 ms/100 ms", "TTFT/TPOT: 2100 ms/100 ms", 1)
    assert a != b
    sources = write_sources(tmp_path / "sources.toml",
                            mlperf_rules=f'url = "{server.url("/rules.adoc")}"')
    settings = make_settings(tmp_path, sources)
    seen = []
    for text in (a, b, a, b):
        server.files["/rules.adoc"] = text.encode()
        report = refresh(settings)
        assert report.status == "published", report.message
        con = duckdb.connect(str(Layout(settings.data_path).read_current().path), read_only=True)
        seen.append(con.execute("SELECT sha256 FROM source_snapshot WHERE kind = 'rules_document' "
                                "ORDER BY fetched_at DESC LIMIT 1").fetchone()[0])
        con.close()
    sha = [hashlib.sha256(t.encode()).hexdigest() for t in (a, b, a, b)]
    assert seen == sha


def test_a_source_that_never_loaded_is_not_said_to_keep_last_good_data(tmp_path):
    """On a first refresh a failed source has no last good data: the message says it never
    loaded (and says "kept its last good data" only once it has rows)."""
    from tests.conftest import make_settings, write_sources
    from tests.helpers import free_port

    sources = write_sources(tmp_path / "sources.toml", curated="",
                            azure_prices=f'url = "http://127.0.0.1:{free_port()}/prices"')
    report = refresh(make_settings(tmp_path, sources, http_retries=0))
    assert report.status == "partial", report.as_dict()
    assert "azure_prices failed and has never loaded" in report.message
    assert "kept its last good data" not in report.message


def test_a_republished_round_keeps_what_it_revised_and_withdrew(published, server,
                                                                client_for):
    """MLCommons re-publishing a round overwrote its rows in place: a revised result's earlier
    figure and a withdrawn result lived on only in an older snapshot file, until retention
    deleted it. Both are kept in mlperf_result_revision with their dates, and
    /v1/results/{id} shows them; the same bytes read again revise nothing."""
    settings, a = published
    client = client_for(settings)
    before = {r["id"]: r for r in served_rows(client)}
    [revised] = [r for r in before.values() if r["result"] == 240274.0]
    lines = a.decode().splitlines(keepends=True)
    gone_line = lines[-1]  # the file's last result, removed upstream
    b = "".join(lines[:-1]).encode().replace(b'"240274.0"', b'"240275.0"')
    server.files["/summary.csv"] = b
    assert refresh(settings).status == "published"
    client = client_for(settings)
    after = {r["id"]: r for r in served_rows(client)}
    withdrawn = set(before) - set(after)
    assert withdrawn and all(before[i]["system_name"] in gone_line for i in withdrawn)
    assert after[revised["id"]]["result"] == 240275.0

    item = client.get(f"/v1/results/{revised['id']}").json()
    [old] = item["history"]
    assert (item["row"]["result"], item["withdrawn"]) == (240275.0, False)
    assert (old["status"], old["result"], old["units"]) == ("revised", 240274.0, "Tokens/s")
    assert old["valid_from"] == revised["source_fetched_at"]
    assert old["valid_to"] == item["row"]["source_fetched_at"] > old["valid_from"]
    assert old["source_sha256"] == hashlib.sha256(a).hexdigest()
    for result_id in withdrawn:
        gone = client.get(f"/v1/results/{result_id}")
        assert gone.status_code == 200
        body = gone.json()
        assert body["row"] is None and body["withdrawn"] is True
        assert [(h["status"], h["result"]) for h in body["history"]] == [
            ("withdrawn", before[result_id]["result"])]
    with duckdb.connect(str(Layout(settings.data_path).read_current().path),
                        read_only=True) as con:
        kept = con.execute("SELECT count(*) FROM mlperf_result_revision").fetchone()[0]
    assert kept == len(withdrawn) + 1
    assert refresh(settings).status == "unchanged"  # nothing new: nothing revised again
