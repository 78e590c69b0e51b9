"""/v1/frontier and /v1/observations over warehouses refreshed from a real local server:
a hand-checked set of points (expected values computed here, independently of the SQL), and
the recorded real payloads with the real MLPerf v6.1 results overlaid."""

from __future__ import annotations

import copy
import csv
import io
import json

import pytest

from ingest.refresh import refresh
from tests.conftest import make_settings
from tests.helpers import SUMMARY_CSV
from tests.ingest.inferencex.cases import lookup_rows, serve, sources

# (n, interactivity, output tokens/s per GPU, date): the hand-checked set on h100 (8 GPUs, TP8).
POINTS = [
    (1, 10.0, 1000.0, "2026-09-03"),   # A frontier
    (2, 20.0, 900.0, "2026-09-03"),    # B frontier
    (3, 15.0, 800.0, "2026-09-03"),    # C dominated by B
    (4, 40.0, 500.0, "2026-09-03"),    # D frontier
    (5, 40.0, 450.0, "2026-09-03"),    # E dominated by D
    (6, 60.0, 100.0, "2026-09-03"),    # F frontier
    (7, 30.0, 500.0, "2026-09-03"),    # G dominated by D (same y, less x)
    (8, 50.0, 5000.0, "2026-08-01"),   # an older run of the same configuration: not current
]


def hand_rows() -> list[dict]:
    template = lookup_rows()[0]
    out = []
    for n, x, y, day in POINTS:
        row = copy.deepcopy(template)
        # a concurrency that makes the point physical (conc x interactivity = output tokens/s
        # of the 8 GPUs) and figures that add up, so the publisher's invariants hold
        row.update(id=f"9000{n}", hardware="h100", model="dsr1", isl=1024, osl=1024,
                   conc=round(y * 8 / x), date=day)
        row["metrics"].update(median_intvty=x, output_tput_per_gpu=y, input_tput_per_gpu=y,
                              tput_per_gpu=y * 2, power_valid=0 if n == 2 else 1)
        out.append(row)
    return out


def frontier_by_hand(points):
    """Pareto-optimal (x, y) of the current points, by brute force."""
    current = [(x, y) for _, x, y, day in points if day == "2026-09-03"]
    return sorted((x, y) for x, y in current
                  if not any(x2 >= x and y2 >= y and (x2, y2) != (x, y) for x2, y2 in current))


def at_by_hand(front, x0):
    for (x1, y1), (x2, y2) in zip(front, front[1:], strict=False):
        if x1 <= x0 <= x2:
            return y1 + (y2 - y1) * (x0 - x1) / (x2 - x1)
    return None


@pytest.fixture(scope="module")
def hand_dir(tmp_path_factory, session_server):
    tmp = tmp_path_factory.mktemp("hand")
    session_server.reset()
    serve(session_server, json.dumps(hand_rows()).encode())
    report = refresh(make_settings(tmp, sources(tmp / "sources.toml", session_server)))
    session_server.reset()
    assert report.status == "published", report.as_dict()
    return tmp


@pytest.fixture
def hand(hand_dir, client_for):
    return client_for(make_settings(hand_dir, hand_dir / "sources.toml"))


def rows(client, **params):
    r = client.get("/v1/frontier", params={"model": "deepseek-r1", "isl": 1024, "osl": 1024,
                                           **params})
    assert r.status_code == 200, r.text
    return r.json()["rows"]


def test_dominated_points_are_dropped(hand):
    got = rows(hand, accelerator="h100")
    expected = frontier_by_hand(POINTS)
    assert expected == [(10, 1000), (20, 900), (40, 500), (60, 100)]
    assert [(p["interactivity"], p["output_tput_per_gpu"]) for p in got] == expected
    assert {p["kind"] for p in got} == {"frontier"}
    assert got[0]["series"] == "nvidia-h100-sxm" and got[0]["hardware"] == "h100"
    everything = rows(hand, accelerator="h100", include_dominated="true")
    assert sorted(p["interactivity"] for p in everything if p["kind"] == "dominated") == [15, 30, 40]
    assert 50.0 not in [p["interactivity"] for p in everything]  # not the current run


def test_interpolation_between_neighbours_only(hand):
    front = frontier_by_hand(POINTS)
    [answer] = [p for p in rows(hand, accelerator="h100", interactivity=30)
                if p["kind"] == "at_interactivity"]
    assert answer["status"] == "interpolated"
    assert answer["output_tput_per_gpu"] == pytest.approx(at_by_hand(front, 30)) == pytest.approx(700)
    assert (answer["left_id"], answer["right_id"]) == ("ix:90002", "ix:90004")
    # cost at the assumed $10 per GPU-hour: 10 / (700 x 3600) x 1e6
    assert answer["cost_per_million_tokens"] == pytest.approx(10 / (700 * 3600) * 1e6)
    [exact] = [p for p in rows(hand, accelerator="h100", interactivity=40)
               if p["kind"] == "at_interactivity"]
    assert (exact["status"], exact["output_tput_per_gpu"]) == ("measured", 500)


@pytest.mark.parametrize(("x0", "nearest"), [(5, (10, 1000, "ix:90001")), (70, (60, 100, "ix:90006"))])
def test_out_of_range_is_refused_with_the_nearest_point(hand, x0, nearest):
    [answer] = [p for p in rows(hand, accelerator="h100", interactivity=x0)
                if p["kind"] == "at_interactivity"]
    assert answer["status"] == "out of range"
    assert answer["output_tput_per_gpu"] is None and answer["cost_per_million_tokens"] is None
    assert (answer["nearest_interactivity"], answer["nearest_output_tput_per_gpu"],
            answer["nearest_id"]) == nearest


def test_energy_only_where_the_power_verdict_is_valid(hand):
    got = {p["interactivity"]: p for p in rows(hand, accelerator="h100")}
    assert got[20]["joules_per_output_token"] is None  # power_valid 0
    assert got[20]["power_status"] == "invalid"
    assert got[40]["joules_per_output_token"] == pytest.approx(4.016292)
    assert got[40]["energy_scope"].startswith("InferenceX: GPU board power only")
    assert "https://github.com/SemiAnalysisAI/InferenceX" in got[40]["notice"]


def test_the_frontier_in_csv(hand):
    r = hand.get("/v1/frontier", params={"model": "dsr1", "isl": 1024, "osl": 1024,
                                         "accelerator": "h100", "interactivity": 30,
                                         "format": "csv"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv")
    table = list(csv.DictReader(io.StringIO(r.text)))
    assert [t["kind"] for t in table].count("frontier") == 4
    assert [t["status"] for t in table if t["kind"] == "at_interactivity"] == ["interpolated"]


def test_observations_filters_and_nulls(hand):
    r = hand.get("/v1/observations", params={"model": "deepseek-r1", "accelerator": "H100",
                                             "date_from": "2026-09-01", "sort": "conc"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["total"] == 7
    first = body["rows"][0]
    assert first["evidence"] == "third_party_measured"
    assert first["measurer"] == "SemiAnalysis InferenceX"
    assert first["run_url"].startswith("https://github.com/SemiAnalysisAI/InferenceX/actions/runs/")
    assert first["accelerator_id"] == "nvidia-h100-sxm" and first["model_id"] == "deepseek-r1"
    assert first["source_name"] == "inferencex"
    none = hand.get("/v1/observations", params={"model": "no-such-model"}).json()
    assert none["total"] == 0 and "no-such-model" in none["hint"]
    assert hand.get("/v1/observations", params={"date_to": "yesterday"}).status_code == 422


# ------------------------------------------------------------- real payloads, MLPerf overlaid


@pytest.fixture(scope="module")
def real_dir(frontier_warehouse):
    return frontier_warehouse


@pytest.fixture
def real(real_dir, client_for):
    return client_for(make_settings(real_dir, real_dir / "sources.toml"))


def test_mlperf_results_sit_on_the_same_axes_and_never_in_the_curve(real):
    got = rows(real, accelerator="b200")
    ml = [p for p in got if p["kind"] == "mlperf"]
    ix = [p for p in got if p["kind"] == "frontier"]
    assert ix and ml
    # expected from the CSV itself: closed-division DeepSeek-R1 results on B200, per accelerator
    with SUMMARY_CSV.open(newline="") as f:
        expected = sorted(
            (r["Scenario"].capitalize(), float(r["Result"]) / int(r["total_accelerators"]))
            for r in csv.DictReader(f)
            if r["accelerator_model_name"] == "NVIDIA B200-SXM-180GB"
            and r["Model"].startswith("deepseek-r1") and r["Division"] == "closed"
            and r["Units"] == "Tokens/s")
    got_ml = sorted((p["scenario"], p["output_tput_per_gpu"]) for p in ml)
    assert [s for s, _ in got_ml] == [s for s, _ in expected] == ["Offline", "Offline", "Server", "Server"]
    assert [y for _, y in got_ml] == pytest.approx([y for _, y in expected])
    offline = [p for p in ml if p["scenario"] == "Offline"]
    server = [p for p in ml if p["scenario"] == "Server"]
    assert all(p["interactivity"] == 0 for p in offline)
    assert all(p["interactivity"] == pytest.approx(1000 / p["tpot_limit_ms"]) for p in server)
    for p in ml:
        assert p["evidence"] == "measured" and "not verified by MLCommons" in p["notice"]
        assert p["id"].startswith("mlperf:")
    # the curve is InferenceX's alone: every frontier point is an observation id
    assert all(p["id"].startswith("ix:") for p in ix)
    assert all(p["evidence"] == "third_party_measured" for p in ix)
    # and the frontier has no point another beats on both axes
    pts = [(p["interactivity"], p["output_tput_per_gpu"]) for p in ix]
    assert not any(x2 >= x and y2 >= y and (x2, y2) != (x, y) for x, y in pts for x2, y2 in pts)


def test_mlperf_beside_inferencex_is_cited_and_the_combination_labelled(real):
    got = rows(real, accelerator="b200", limit=1000)
    for p in got:  # every row says the answer combines MLPerf with non-MLPerf results
        assert p["combined"].startswith("Combines MLPerf Inference results")
        assert "not verified by MLCommons" in p["combined"]
    ml = [p for p in got if p["kind"] == "mlperf"]
    assert ml
    for p in ml:
        assert (p["round"], p["division"]) == ("v6.1", "closed")
        assert p["availability"] == "available" and p["preview"] is False
        # v6.1 publishes no result ID: the citation names organisation, system, round and the
        # results path at the pinned commit
        assert p["mlperf_id"] is None
        assert p["citation"].startswith(f"{p['organization']}, {p['system_name']}, "
                                        "MLPerf Inference v6.1 (closed, ")
        assert p["details_url"] and p["details_url"] in p["citation"]
        assert p["lengths_match"] is False and "its own dataset" in p["lengths_note"]
        assert "MLPerf is a trademark of MLCommons Association" in p["notice"]
    # the CSV carries the same citation and label on every row
    text = real.get("/v1/frontier", params={"model": "deepseek-r1", "isl": 1024, "osl": 1024,
                                            "accelerator": "b200", "limit": 1000,
                                            "format": "csv"}).text
    table = list(csv.DictReader(io.StringIO(text)))
    assert len(table) == len(got)
    assert all(r["combined"].startswith("Combines MLPerf") for r in table)
    assert sorted(r["citation"] for r in table if r["kind"] == "mlperf") == \
        sorted(p["citation"] for p in ml)


def test_the_mlperf_overlay_is_what_a_buyer_can_get_unless_asked(real):
    """The overlay drew preview systems beside available ones by default (v6.1's preview
    Vera Rubin NVL72 above every available GB300); like every MLPerf route it now shows
    available systems unless mlperf_availability says otherwise."""
    base = {"model": "deepseek-r1", "isl": 1024, "osl": 1024, "limit": 1000,
            "mlperf_accelerator": "nvidia-vera-rubin,nvidia-gb300"}

    def overlaid(**more):
        r = real.get("/v1/frontier", params={**base, **more})
        assert r.status_code == 200, r.text
        return {(p["accelerator_id"], p["availability"]) for p in r.json()["rows"]
                if p["kind"] == "mlperf"}
    default, every = overlaid(), overlaid(mlperf_availability="all")
    assert ("nvidia-gb300", "available") in default and {a for _, a in default} == {"available"}
    assert every - default == {("nvidia-vera-rubin", "preview")}
    assert overlaid(mlperf_availability="preview") == {("nvidia-vera-rubin", "preview")}
    bad = real.get("/v1/frontier", params={**base, "mlperf_availability": "soon"})
    assert bad.status_code == 422 and bad.json()["error"]["param"] == "mlperf_availability"


def test_lengths_beyond_the_columns_are_a_422_not_a_500(hand):
    # found by schemathesis: isl=2147483648 overflowed the INTEGER parameter
    assert hand.get("/v1/frontier", params={"model": "dsr1", "isl": 2**31, "osl": 1}).status_code == 422
    assert hand.get("/v1/observations", params={"isl": 2**31}).status_code == 422


@pytest.mark.parametrize("given, status", [("all", 200), ("open", 200), ("all,nope", 422),
                                           ("nope", 422)])
def test_mlperf_division_all_or_known_values_else_422(real, given, status):
    """``mlperf_division=all`` shows every division; any other value is one the API knows,
    beside ``all`` too (``all,nope`` was taken as ``all``)."""
    r = real.get("/v1/frontier", params={"model": "deepseek-r1", "isl": 1024, "osl": 1024,
                                         "mlperf_division": given})
    assert r.status_code == status, r.text
    if status == 422:
        assert r.json()["error"]["param"] == "mlperf_division"
        assert "'nope' is not one of closed, open" in r.json()["error"]["message"]


@pytest.mark.parametrize("params, param", [
    ({"provider": "gpc"}, "provider"), ({"region": "nowhere"}, "region"),
    ({"provider": "azure", "region": "eastus"}, "region")])
def test_a_place_that_prices_nothing_is_a_422(real, params, param):
    """provider=gpc (a typo) or region=nowhere answered every point with no list price and no
    hint; region with provider was ignored. Each is a 422 naming its parameter."""
    r = real.get("/v1/frontier", params={"model": "deepseek-r1", "isl": 1024, "osl": 1024,
                                         **params})
    assert r.status_code == 422 and r.json()["error"]["param"] == param, r.text
    ok = real.get("/v1/frontier", params={"model": "deepseek-r1", "isl": 1024, "osl": 1024,
                                          "region": "EastUS2"})
    assert ok.status_code == 200
