"""Per GPU means per every GPU, checked against the publisher's own invariants (#42): real
published rows (aggregated, EP, disaggregated, MTP) pinned to figures computed here by hand,
every carried row's invariants recomputed independently of the view's SQL, revisions kept as
versions and read back with ``as_of``, and a model the API refuses failing alone."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import duckdb
import pytest

from ingest.refresh import refresh
from tests.conftest import make_settings
from tests.helpers import Reply
from tests.ingest.inferencex.cases import (
    AVAILABILITY,
    BENCHMARKS,
    case,
    lookup_rows,
    multinode_aggregated_row,
    rows,
    serve,
    sources,
)
from warehouse.storage.store import Layout

# InferenceX's own example answer for DeepSeek-V4-Pro on B200, 8k/1k, 2026-09-04 (PROVENANCE.md).
POWERX = "powerx"


def powerx_rows() -> list[dict]:
    return json.loads(case(POWERX))["rows"]


def current(tmp) -> duckdb.DuckDBPyConnection:
    snap = Layout(tmp / "var").read_current()
    assert snap is not None
    return duckdb.connect(str(snap.path), read_only=True)


def published(server, tmp_path, body: bytes, **kw):
    serve(server, body)
    settings = make_settings(tmp_path, sources(tmp_path / "sources.toml", server, **kw))
    report = refresh(settings)
    assert report.status == "published", report.as_dict()
    return settings


@pytest.fixture
def powerx(server, tmp_path):
    published(server, tmp_path, json.dumps(powerx_rows()).encode(), models='["dsv4"]')
    con = current(tmp_path)
    yield {r[0]: dict(zip([d[0] for d in con.description], r, strict=True))
           for r in con.execute("SELECT upstream_id, * FROM observation").fetchall()}
    con.close()


def test_real_rows_are_per_every_gpu(powerx):
    # disaggregated, 6 prefill workers x TP8 = 48 GPUs and 2 decode workers x TP8 = 16 GPUs:
    # InferenceX's 4,325.5 output tokens/s divides by the 16 decode GPUs only
    dis = powerx["440856"]
    assert (dis["prefill_gpus"], dis["decode_gpus"], dis["gpus"]) == (48, 16, 64)
    assert dis["output_tput_per_decode_gpu"] == pytest.approx(4325.547, rel=1e-5)
    assert dis["output_tput_per_gpu"] == pytest.approx(4325.547 * 16 / 64, rel=1e-5)  # 1,081.4
    assert dis["input_tput_per_gpu"] == pytest.approx(11536.8 * 48 / 64, rel=1e-4)
    assert dis["tput_per_gpu"] == pytest.approx(9734.0, rel=1e-4)  # already per all 64
    assert dis["invariant_failures"] is None and dis["reconciled"]
    # aggregated TP8 EP8 on one node: the published 64/64 are TP x EP; the GPUs are 8, as the
    # row's own total GPU power / mean GPU power (5,167.287 / 645.911) says
    ep = powerx["440994"]
    assert (ep["num_prefill_gpu"], ep["num_decode_gpu"], ep["gpus"]) == (64, 64, 8)
    assert 5167.287 / 645.911 == pytest.approx(8, abs=1e-3)
    assert ep["output_tput_per_gpu"] == pytest.approx(160.8227, rel=1e-5)  # unchanged
    assert ep["physical_ratio"] == pytest.approx(64 * 20.0535 / (160.8227 * 8), rel=1e-4)
    # disaggregated with MTP, 8 prefill + 8 decode
    mtp = powerx["440437"]
    assert (mtp["spec_method"], mtp["gpus"]) == ("mtp", 16)
    assert mtp["output_tput_per_gpu"] == pytest.approx(1523.4 / 2, rel=1e-4)
    # aggregated TP8 EP1
    assert powerx["440982"]["gpus"] == 8


def test_published_gpu_counts_are_described_as_published(server, tmp_path, client_for):
    # Row 440994 (B200 TP8 EP8, aggregated) publishes 64 prefill and 64 decode "GPUs"; its own
    # total GPU power / mean power per GPU (5,167.287 / 645.911) says 8 GPUs were measured.
    data = powerx_rows()
    settings = published(server, tmp_path, json.dumps(data).encode(), models='["dsv4"]')
    [raw] = [r for r in data if r["id"] == "440994"]
    measured = raw["metrics"]["avg_total_gpu_power_w"] / raw["metrics"]["avg_power_w"]
    assert (raw["num_prefill_gpu"], raw["num_decode_gpu"], round(measured)) == (64, 64, 8)
    assert raw["decode_tp"] * raw["decode_ep"] == 64
    # so no description, in the warehouse or in the OpenAPI document, may call them GPUs
    con = current(tmp_path)
    comments = con.execute(
        "SELECT table_name, column_name, comment FROM duckdb_columns() WHERE column_name IN "
        "('num_prefill_gpu', 'num_decode_gpu') AND table_name IN "
        "('inferencex_observation', 'observation')").fetchall()
    con.close()
    doc = client_for(settings).get("/openapi.json").json()
    served = [(name, column, prop.get("description", ""))
              for name, schema in doc["components"]["schemas"].items()
              for column, prop in schema.get("properties", {}).items()
              if column in ("num_prefill_gpu", "num_decode_gpu")]
    assert len(comments) == 4 and served
    for where, column, text in comments + served:
        assert "Physical" not in text, (where, column, text)
        assert "as InferenceX publishes it" in text and "TP x EP" in text, (where, column)
        assert "64 on 8 GPUs" in text and "(gpus, gpu_count_basis)" in text, (where, column)


def test_cost_per_million_charges_every_gpu(server, tmp_path, client_for):
    settings = published(server, tmp_path, json.dumps(powerx_rows()).encode(), models='["dsv4"]')
    client = client_for(settings)
    r = client.get("/v1/frontier", params={"model": "dsv4", "isl": 8192, "osl": 1024,
                                           "rate": 10, "include_dominated": "true",
                                           "limit": 1000})
    assert r.status_code == 200, r.text
    point = {p["id"]: p for p in r.json()["rows"]}["ix:440856"]
    # $10 per GPU-hour x 64 GPUs / (4,325.5 x 16 output tokens/s x 3600) x 1e6 = $2.57
    by_hand = 10 * 64 / (4325.547 * 16 * 3600) * 1e6
    assert point["cost_per_million_tokens"] == pytest.approx(by_hand, rel=1e-5)
    assert round(point["cost_per_million_tokens"], 2) == 2.57
    assert point["cost_per_million_total_tokens"] == pytest.approx(10 / (9734.0 * 3600) * 1e6,
                                                                   rel=1e-4)
    assert "48 GPUs" in point["configuration"] and "16 GPUs" in point["configuration"]
    assert point["configuration"].startswith("dsv4 b200 dynamo-sglang fp4")


# ---------------------------------------------------------------- every carried row, by hand

def by_hand(row: dict) -> tuple[int | None, set[str]]:
    """The GPU count and the broken invariants of one published row, computed here from the
    rule as written in warehouse/figures/reconcile.py's docstring (not from its SQL)."""
    m = row["metrics"]
    i, o, t = (m.get(k) for k in ("input_tput_per_gpu", "output_tput_per_gpu", "tput_per_gpu"))
    p, d = row["num_prefill_gpu"], row["num_decode_gpu"]
    broken: set[str] = set()
    if row["disagg"]:
        gpus, pre, dec = p + d, p, d
        if None not in (i, o, t) and abs(i * p + o * d - t * (p + d)) > 1e-6 * t * (p + d) \
                and p == d:
            solved = p * (t - o) / (i - o)
            if abs(solved - round(solved)) <= 1e-6 * p and 1 <= round(solved) <= p - 1:
                gpus, pre, dec = p, round(solved), p - round(solved)
        if None not in (i, o, t) and abs(i * pre + o * dec - t * gpus) > 1e-6 * t * gpus:
            broken.add("disaggregated")
        out = None if o is None else o * dec / gpus
    else:
        gpus = (p or 0) + (d or 0) if row["is_multinode"] else \
            row["decode_tp"] * (m.get("pp") or 1) * (m.get("pcp_size") or 1)
        if None not in (i, o, t) and abs(i + o - t) > 1e-6 * t:
            broken.add("aggregated")
        out = o
    if None in (i, o, t):
        broken.add("figures")
    if out and m["median_ttft"] <= 0.1 * m["median_e2el"]:
        ratio = row["conc"] * m["median_intvty"] / (out * gpus)
        if not 0.8 <= ratio <= 2.5:
            broken.add("physical")
    if m.get("power_valid") == 1 and m.get("avg_total_gpu_power_w") and m.get("avg_power_w"):
        if abs(m["avg_total_gpu_power_w"] / m["avg_power_w"] - gpus) > 0.01 * gpus:
            broken.add("power")
    return gpus, broken


@pytest.mark.parametrize("name", ["benchmarks", "benchmarks-history", POWERX])
def test_every_carried_row_is_counted_and_checked_as_written(name, server, tmp_path):
    data = powerx_rows() if name == POWERX else rows(name)
    published(server, tmp_path, json.dumps(data).encode())
    con = current(tmp_path)
    got = {r[0]: (r[1], set() if r[2] is None else {f.split(":")[0] for f in r[2].split("; ")})
           for r in con.execute("SELECT observation_key, gpus, invariant_failures "
                                "FROM observation").fetchall()}
    con.close()
    from ingest.inferencex.parse import natural_id
    expected = {natural_id(r): by_hand(r) for r in data}
    assert got == expected
    failing = {k: v for k, v in expected.items() if v[1]}
    if name == POWERX:  # InferenceX's September rows all reconcile, power included
        assert failing == {}
    if name == "benchmarks":
        # the only rows that do not reconcile: two MI355X rows without input/output figures,
        # and the MI355X ATOM MTP row whose throughput is 40x what its concurrency and
        # interactivity allow
        assert sorted(v[1] for v in failing.values()) == [
            {"figures"}, {"figures"}, {"physical"}]


def test_mirrored_disaggregated_counts_are_solved_from_the_invariant(server, tmp_path):
    # GB200 dynamo rows of December 2025 publish prefill = decode = 36 (one total, mirrored);
    # InferenceX's own figures satisfy its invariant only with 4 prefill and 32 decode GPUs
    data = [r for r in rows("benchmarks") if r["disagg"] and not r["is_multinode"]]
    assert len(data) == 8
    published(server, tmp_path, json.dumps(data).encode())
    con = current(tmp_path)
    got = con.execute("SELECT num_prefill_gpu, prefill_gpus, decode_gpus, gpus, reconciled "
                      "FROM observation WHERE conc = 4 AND isl = 1024").fetchall()
    con.close()
    assert got == [(36, 4, 32, 36, True)]
    [row] = [r for r in data if r["conc"] == 4 and r["isl"] == 1024]
    m = row["metrics"]
    assert m["input_tput_per_gpu"] * 4 + m["output_tput_per_gpu"] * 32 == \
        pytest.approx(m["tput_per_gpu"] * 36, rel=1e-9)


def _multinode_aggregated(server, tmp_path, disagg: bool) -> dict:
    published(server, tmp_path, json.dumps([multinode_aggregated_row(disagg=disagg)]).encode(),
              models='["dsv4"]')
    con = current(tmp_path)
    [row] = con.execute("SELECT * FROM observation").fetchall()
    names = [d[0] for d in con.description]
    con.close()
    return dict(zip(names, row, strict=True))


def test_a_multinode_aggregated_row_counts_its_prefill_gpus(server, tmp_path):
    # the runner writes all 8 GPUs as prefill and 0 as decode (decode TP 0): 8 GPUs, each
    # figure per GPU as published (8,000 / 8 in all, 2,000 / 8 input, 6,000 / 8 output)
    row = _multinode_aggregated(server, tmp_path, disagg=False)
    assert (row["gpus"], row["gpu_count_basis"]) == (8, "published GPUs (aggregated, multinode)")
    assert (row["tput_per_gpu"], row["input_tput_per_gpu"], row["output_tput_per_gpu"]) == \
        (1000.0, 250.0, 750.0)
    assert row["physical_ratio"] == pytest.approx(1 * 5000 / (750 * 8))
    assert row["invariant_failures"] is None and row["reconciled"]
    # as InferenceX's own fixture writes it (DISAGG true): still 8 GPUs, and the model loads
    (tmp_path / "as-written").mkdir()
    assert _multinode_aggregated(server, tmp_path / "as-written", disagg=True)["gpus"] == 8


def test_a_multinode_aggregated_row_as_its_runner_writes_it_reconciles(server, tmp_path):
    """Upstream's runner writes such a row disagg true with 0 decode GPUs: it was read as
    disaggregated (output per GPU 750 x 0 / 8 = 0, flagged, never drawn)."""
    row = _multinode_aggregated(server, tmp_path, disagg=True)
    assert (row["gpus"], row["output_tput_per_gpu"]) == (8, 750.0)
    assert row["invariant_failures"] is None and row["reconciled"]


def test_a_row_that_breaks_an_invariant_is_never_drawn(server, tmp_path, client_for):
    data = powerx_rows()
    broken = next(r for r in data if r["id"] == "440856")
    broken["metrics"]["output_tput_per_gpu"] *= 4  # as if divided by a quarter of the GPUs
    settings = published(server, tmp_path, json.dumps(data).encode(), models='["dsv4"]')
    client = client_for(settings)
    obs = client.get("/v1/observations", params={"model": "dsv4", "limit": 1000}).json()["rows"]
    [row] = [o for o in obs if o["upstream_id"] == "440856"]
    assert row["reconciled"] is False
    assert row["invariant_failures"].startswith("disaggregated: input x prefill GPUs")
    front = client.get("/v1/frontier", params={"model": "dsv4", "isl": 8192, "osl": 1024,
                                               "include_dominated": "true", "limit": 1000})
    assert "ix:440856" not in {p["id"] for p in front.json()["rows"]}
    assert len([p for p in front.json()["rows"] if p["kind"] in ("frontier", "dominated")]) \
        == len(data) - 1


def test_frontier_filters_by_spec_method_and_disagg(server, tmp_path, client_for):
    settings = published(server, tmp_path, json.dumps(powerx_rows()).encode(), models='["dsv4"]')
    client = client_for(settings)

    def ids(**params):
        r = client.get("/v1/frontier", params={"model": "dsv4", "isl": 8192, "osl": 1024,
                                               "include_dominated": "true", "limit": 1000,
                                               **params})
        assert r.status_code == 200, r.text
        return {p["id"] for p in r.json()["rows"] if p["kind"] != "mlperf"}

    data = powerx_rows()
    assert ids(spec_method="mtp") == {f"ix:{r['id']}" for r in data if r["spec_method"] == "mtp"}
    assert ids(disagg="false") == {f"ix:{r['id']}" for r in data if not r["disagg"]}
    assert ids(disagg="true", spec_method="none") == {
        f"ix:{r['id']}" for r in data if r["disagg"] and r["spec_method"] == "none"}


# ---------------------------------------------------------------- revisions and failures

def test_a_revision_is_a_new_version_and_the_old_one_reads_back_with_as_of(server, tmp_path,
                                                                           client_for):
    first = lookup_rows()
    settings = published(server, tmp_path, json.dumps(first).encode(), models='["dsv4"]')
    between = datetime.now(UTC)
    revised = json.loads(json.dumps(first))
    revised[0]["metrics"]["median_intvty"] = 21.5  # upstream corrects one figure
    server.files[BENCHMARKS] = json.dumps(revised).encode()
    report = refresh(settings)
    assert report.status == "published", report.as_dict()
    assert report.sources[0].details["DeepSeek-V4-Pro"]["revised"] == 1
    con = current(tmp_path)
    versions = con.execute("SELECT id, interactivity, valid_to IS NULL FROM inferencex_observation "
                           "WHERE observation_key = 'ix:440994' ORDER BY valid_from").fetchall()
    con.close()
    assert [v[1:] for v in versions] == [(pytest.approx(20.0535, rel=1e-4), False), (21.5, True)]
    assert versions[0][0] == "ix:440994" and versions[1][0].startswith("ix:440994~")
    client = client_for(settings)
    now = client.get("/v1/observations", params={"model": "dsv4"}).json()
    assert now["total"] == 5
    assert {r["interactivity"] for r in now["rows"] if r["upstream_id"] == "440994"} == {21.5}
    then = client.get("/v1/observations", params={"model": "dsv4",
                                                  "as_of": between.isoformat()}).json()
    assert then["total"] == 5
    assert {round(r["interactivity"], 4) for r in then["rows"]
            if r["upstream_id"] == "440994"} == {20.0535}
    # the bytes of the publishing fetch are stored
    con = current(tmp_path)
    assert con.execute("SELECT count(DISTINCT sha256) FROM source_snapshot "
                       "WHERE kind = 'inferencex_benchmarks'").fetchone() == (2,)
    con.close()


def test_a_row_revised_back_and_forth_keeps_every_version(server, tmp_path, client_for):
    # Upstream publishes row 440994's interactivity as A, then B, then A again, then B again:
    # four versions, each with an id of its own (the second B is not the first B again).
    a = lookup_rows()
    b = json.loads(json.dumps(a))
    b[0]["metrics"]["median_intvty"] = 21.5
    settings = published(server, tmp_path, json.dumps(a).encode(), models='["dsv4"]')
    times = [datetime.now(UTC)]
    for body in (b, a, b):
        server.files[BENCHMARKS] = json.dumps(body).encode()
        report = refresh(settings)
        assert report.status == "published", report.as_dict()
        assert report.sources[0].details["DeepSeek-V4-Pro"]["revised"] == 1
        times.append(datetime.now(UTC))
    con = current(tmp_path)
    versions = con.execute("SELECT id, round(interactivity, 4), valid_to IS NULL FROM "
                           "inferencex_observation WHERE observation_key = 'ix:440994' "
                           "ORDER BY valid_from").fetchall()
    con.close()
    a_value = round(a[0]["metrics"]["median_intvty"], 4)
    assert versions == [("ix:440994", a_value, False), ("ix:440994~1", 21.5, False),
                        ("ix:440994~2", a_value, False), ("ix:440994~3", 21.5, True)]
    client = client_for(settings)
    for at, want in zip(times, (a_value, 21.5, a_value, 21.5), strict=True):
        then = client.get("/v1/observations", params={"model": "dsv4",
                                                      "as_of": at.isoformat()}).json()
        assert then["total"] == 5
        assert {round(r["interactivity"], 4) for r in then["rows"]
                if r["upstream_id"] == "440994"} == {want}


def test_a_model_the_api_refuses_fails_alone(server, tmp_path, client_for):
    serve(server)
    server.files[AVAILABILITY] = json.dumps([{"model": "dsr1"}, {"model": "gptoss120b"}]).encode()
    real = case("benchmarks")
    del server.files[BENCHMARKS]
    server.handlers[BENCHMARKS] = lambda req: (
        Reply(400, b'{"error":"Unknown model"}') if "gpt-oss" in req.query.lower()
        else Reply(200, real))
    settings = make_settings(tmp_path, sources(tmp_path / "sources.toml", server,
                                               models="[]"))
    report = refresh(settings)
    assert report.status == "partial", report.as_dict()
    [outcome] = report.sources
    assert outcome.status == "partial"
    assert "model gpt-oss-120b" in outcome.message and "400" in outcome.message
    con = current(tmp_path)
    assert con.execute("SELECT DISTINCT model FROM inferencex_observation").fetchall() == \
        [("dsr1",)]
    con.close()
    client = client_for(settings)
    [source] = [s for s in client.get("/healthz").json()["sources"] if s["source"] == "inferencex"]
    assert "model gpt-oss-120b" in source["message"]
    empty = client.get("/v1/observations", params={"model": "gpt-oss-120b"}).json()
    assert empty["total"] == 0
    assert empty["hint"].startswith("no model 'gpt-oss-120b' in this snapshot: the inferencex "
                                    "source's model gpt-oss-120b failed in the last refresh")
    assert "400" in empty["hint"]


def test_unmapped_keys_are_named_on_the_run_s_message(server, tmp_path):
    data = lookup_rows()
    data[0]["hardware"] = "tpu7x"
    published(server, tmp_path, json.dumps(data).encode(), models='["dsv4"]')
    settings = make_settings(tmp_path, tmp_path / "sources.toml")
    server.files[BENCHMARKS] = json.dumps(data[:4]).encode()  # a change, so the source runs
    report = refresh(settings)
    [outcome] = report.sources
    assert "unmapped hardware key(s) tpu7x (add them to data/inferencex.yaml)" in outcome.message
    assert outcome.details["unmapped_keys"] == {"hardware": ["tpu7x"]}


def test_available_models_without_a_display_name_are_named(server, tmp_path):
    serve(server, json.dumps(lookup_rows()).encode())
    server.files[AVAILABILITY] = json.dumps([{"model": "dsv4"}, {"model": "newmodel9"}]).encode()
    report = refresh(make_settings(tmp_path, sources(tmp_path / "sources.toml", server,
                                                     models="[]")))
    [outcome] = report.sources
    assert outcome.details["models_without_display_name"] == ["newmodel9"]
    assert "model key(s) newmodel9 listed as available but without a display name" \
        in outcome.message


def test_an_answer_out_of_range_says_the_measured_range(server, tmp_path, client_for):
    settings = published(server, tmp_path, json.dumps(powerx_rows()).encode(), models='["dsv4"]')
    client = client_for(settings)
    r = client.get("/v1/frontier", params={"model": "dsv4", "isl": 8192, "osl": 1024,
                                           "interactivity": 5000, "accelerator": "b200"})
    points = r.json()["rows"]
    [answer] = [p for p in points if p["kind"] == "at_interactivity"]
    front = [p["interactivity"] for p in points if p["kind"] == "frontier"]
    assert answer["status"] == "out of range" and answer["output_tput_per_gpu"] is None
    assert (answer["measured_interactivity_min"], answer["measured_interactivity_max"]) == \
        (min(front), max(front))
    assert "Out of the measured range" in answer["notice"]
    assert "Interpolated" not in answer["notice"]
    inside = client.get("/v1/frontier", params={"model": "dsv4", "isl": 8192, "osl": 1024,
                                                "interactivity": (min(front) + max(front)) / 2,
                                                "accelerator": "b200"}).json()["rows"]
    [mid] = [p for p in inside if p["kind"] == "at_interactivity"]
    assert mid["status"] == "interpolated" and mid["tput_per_gpu"] is not None
    assert mid["notice"].endswith("not an InferenceX measurement.")
