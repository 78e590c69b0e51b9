"""Refreshing InferenceX from a real local HTTP server serving recorded payloads: rows land,
history is kept across refreshes, a broken answer keeps the last good rows, identity is
reported."""

from __future__ import annotations

import json

import duckdb

from ingest.refresh import refresh
from tests.conftest import make_settings
from tests.ingest.inferencex.cases import (
    AVAILABILITY,
    BENCHMARKS,
    case,
    lookup_rows,
    rows,
    serve,
    sources,
)
from warehouse.storage.store import Layout


def current(tmp) -> duckdb.DuckDBPyConnection:
    snap = Layout(tmp / "var").read_current()
    assert snap is not None
    return duckdb.connect(str(snap.path), read_only=True)


def test_two_refreshes_append_and_keep_history(server, tmp_path, client_for):
    serve(server)
    settings = make_settings(tmp_path, sources(tmp_path / "sources.toml", server))
    first = refresh(settings)
    assert first.status == "published", first.as_dict()
    [outcome] = first.sources
    assert outcome.rows == 435
    assert server.hits(BENCHMARKS)[0].query == "model=DeepSeek-R1-0528"
    con = current(tmp_path)
    before = dict(con.execute("SELECT id, source_snapshot_id FROM inferencex_observation").fetchall())
    con.close()

    server.files[BENCHMARKS] = case("benchmarks-history")  # the API now answers more runs
    second = refresh(settings)
    assert second.status == "published", second.as_dict()
    # The history answer is a sample: rows of the first answer it leaves out while listing
    # their configuration at the same or an earlier date are withdrawn (marked, kept).
    withdrawn = _withdrawn(rows("benchmarks"), rows("benchmarks-history"))
    assert second.sources[0].details["DeepSeek-R1-0528"]["withdrawn"] == len(withdrawn) > 0
    assert second.sources[0].rows == 1462 - 230 + len(withdrawn)
    con = current(tmp_path)
    after = dict(con.execute("SELECT id, source_snapshot_id FROM inferencex_observation").fetchall())
    assert len(after) == 435 + 1462 - 230
    marked = con.execute("SELECT upstream_id, id FROM inferencex_observation "
                         "WHERE withdrawn_at IS NOT NULL").fetchall()
    assert len(marked) == len(withdrawn)
    # kept, and no longer current: never drawn, priced, compared or listed by default
    ids = [i for _, i in marked]
    assert con.execute("SELECT count(*) FROM observation WHERE list_contains(?, id) AND current",
                       [ids]).fetchone() == (0,)
    [(open_versions,)] = con.execute("SELECT count(*) FROM inferencex_observation "
                                     "WHERE valid_to IS NULL").fetchall()
    assert con.execute("SELECT count(*) FROM observation WHERE current AND source = "
                       "'inferencex'").fetchone() == (open_versions - len(withdrawn),)
    listed = client_for(settings).get("/v1/observations", params={"limit": 1}).json()
    assert listed["total"] == open_versions - len(withdrawn)
    # every first-refresh row is still there, still citing the bytes it was first read from
    assert {k: after[k] for k in before} == before
    # the 230 runs both answers carry kept their first version (with image; history has none)
    images = con.execute("SELECT count(*) FROM inferencex_observation WHERE image IS NOT NULL").fetchone()
    assert images == (435 - 28,)
    con.close()

    third = refresh(settings)  # same bytes again: nothing to publish
    assert third.status == "unchanged"


CONFIG = ("model", "hardware", "framework", "precision", "spec_method", "disagg", "is_multinode",
          "prefill_tp", "prefill_ep", "prefill_dp_attention", "prefill_num_workers", "decode_tp",
          "decode_ep", "decode_dp_attention", "decode_num_workers", "num_prefill_gpu",
          "num_decode_gpu", "benchmark_type", "isl", "osl", "offload_mode")
NATURAL = (*CONFIG, "conc", "date", "run_url")


def _withdrawn(first: list[dict], second: list[dict]) -> list[tuple]:
    """Rows of ``first`` that ``second`` lacks while listing their configuration at the same
    or an earlier date (rows compared by their configuration, concurrency, date and run)."""
    listed = {tuple(r.get(k) for k in NATURAL) for r in second}
    latest: dict[tuple, str] = {}
    for r in second:
        key = tuple(r.get(k) for k in CONFIG)
        latest[key] = max(latest.get(key, r["date"]), r["date"])
    return [tuple(r.get(k) for k in NATURAL) for r in first
            if tuple(r.get(k) for k in NATURAL) not in listed
            and latest.get(tuple(r.get(k) for k in CONFIG), "9999") <= r["date"]]


def test_as_of_is_sent_and_the_observation_date_is_the_rows_own(server, tmp_path):
    serve(server, json.dumps(lookup_rows()).encode())
    settings = make_settings(tmp_path, sources(tmp_path / "sources.toml", server,
                                               models='["dsv4"]', extra='as_of = 2026-09-04'))
    report = refresh(settings)
    assert report.status == "published", report.as_dict()
    assert server.hits(BENCHMARKS)[0].query == "model=DeepSeek-V4-Pro&date=2026-09-04"
    con = current(tmp_path)
    got = con.execute("SELECT DISTINCT requested_as_of::VARCHAR, min(observed_on)::VARCHAR "
                      "FROM inferencex_observation GROUP BY 1").fetchall()
    assert got == [("2026-09-04", min(r["date"] for r in lookup_rows()))]
    assert con.execute("SELECT count(*) FROM inferencex_observation WHERE power_status = 'valid' "
                       "AND joules_per_output_token > 0").fetchone() == (5,)


def test_a_missing_required_field_fails_the_source_and_the_last_good_rows_serve(server, tmp_path):
    serve(server)
    settings = make_settings(tmp_path, sources(tmp_path / "sources.toml", server))
    assert refresh(settings).status == "published"
    broken = rows("benchmarks-history")
    del broken[7]["conc"]
    server.files[BENCHMARKS] = json.dumps(broken).encode()
    report = refresh(settings)
    assert report.status == "failed"
    [outcome] = report.sources
    assert outcome.status == "failed"
    assert "required field 'conc' is missing (row 7 of" in outcome.message
    con = current(tmp_path)
    assert con.execute("SELECT count(*) FROM inferencex_observation").fetchone() == (435,)


def test_identity_maps_keys_and_reports_the_unmapped(server, tmp_path):
    data = rows("benchmarks")[:40]
    data[0]["hardware"] = "jalapeno_teacup"  # listed, no accelerator id
    data[1]["hardware"] = "zx9000"           # not listed at all
    serve(server, json.dumps(data).encode())
    settings = make_settings(tmp_path, sources(tmp_path / "sources.toml", server))
    report = refresh(settings)
    assert report.status == "published", report.as_dict()
    ident = report.coverage["inferencex_identity"]
    assert ident["hardware"]["unmapped"] == ["zx9000"]
    assert ident["hardware"]["no_counterpart"] == ["jalapeno"]
    assert ident["hardware"]["mapped"]["mi355x"] == "amd-mi355x"
    assert ident["model"]["mapped"] == {"dsr1": "deepseek-r1"}
    warnings = [v["expectation"] for v in report.validation if not v["success"]]
    assert "inferencex: every hardware key in observations is listed in the alias file" in warnings
    con = current(tmp_path)
    got = dict(con.execute("SELECT hardware, accelerator_id FROM observation "
                           "WHERE hardware IN ('jalapeno_teacup', 'zx9000', 'b200')").fetchall())
    assert got == {"jalapeno_teacup": None, "zx9000": None, "b200": "nvidia-b200-sxm-180gb"}
    assert con.execute("SELECT DISTINCT model_id FROM observation").fetchall() == [("deepseek-r1",)]


def test_models_default_to_the_availability_listing(server, tmp_path):
    serve(server, b"[]")
    settings = make_settings(tmp_path, sources(tmp_path / "sources.toml", server, models="[]"))
    report = refresh(settings)
    asked = sorted(r.query for r in server.hits(BENCHMARKS))
    assert len(server.hits(AVAILABILITY)) == 1
    # ten raw keys, eight display names (glm5 and glm5.1 share GLM-5), dsv4 included
    assert len(asked) == 9 and "model=DeepSeek-V4-Pro" in asked and "model=GLM-5" in asked
    assert report.status == "published"  # the alias file alone is new
