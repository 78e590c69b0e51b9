"""Parsing recorded real InferenceX responses: columns, NULL not 0, the power verdict, extras,
required fields."""

from __future__ import annotations

import json
import re
from datetime import UTC, date, datetime

import pytest

from ingest.http import Raw
from ingest.inferencex.parse import ParseReport, natural_id, parse_availability, parse_benchmarks
from tests.ingest.inferencex.cases import case, lookup_rows, multinode_aggregated_row, rows
from warehouse.exceptions import ParseError


def parse(body: bytes, report: ParseReport | None = None) -> list[dict]:
    raw = Raw(source="inferencex", url="http://x/api/v1/benchmarks?model=DeepSeek-R1-0528",
              body=body, fetched_at=datetime(2026, 12, 4, tzinfo=UTC))
    return list(parse_benchmarks(raw, display="DeepSeek-R1-0528", snapshot_id="s", as_of=None,
                                 report=report or ParseReport()))


def test_every_recorded_row_parses_with_its_values():
    out = parse(case("benchmarks"))
    assert len(out) == 435 and len({r["id"] for r in out}) == 435
    first = out[0]  # the first row of the payload, values read by hand from the file
    assert (first["hardware"], first["framework"], first["model"], first["precision"]) == \
        ("mi355x", "sglang", "dsr1", "fp4")
    assert (first["isl"], first["osl"], first["conc"]) == (1024, 1024, 4)
    assert (first["decode_tp"], first["num_prefill_gpu"], first["num_decode_gpu"]) == (4, 4, 4)
    assert first["interactivity"] == pytest.approx(103.64816793368249)
    # kept as published, named for what InferenceX divides it by
    assert first["output_tput_per_decode_gpu"] == pytest.approx(98.9883650269406)
    assert first["ttft_p999_s"] == pytest.approx(0.8233558841543273)
    assert first["observed_on"] == date(2026, 6, 11)
    assert first["run_url"].endswith("/actions/runs/27213443242/attempts/1")
    assert first["evidence"] == "third_party_measured"
    assert first["measurer"] == "SemiAnalysis InferenceX"
    assert "https://github.com/SemiAnalysisAI/InferenceX" in first["attribution"]


def test_missing_metrics_are_null_never_zero():
    src = rows("benchmarks")
    out = parse(case("benchmarks"))
    for raw_row, row in zip(src, out, strict=True):
        m = raw_row["metrics"]
        assert (row["ttft_p90_s"] is None) == ("p90_ttft" not in m)
        assert (row["output_tput_per_decode_gpu"] is None) == ("output_tput_per_gpu" not in m)
    missing = [r for r in out if r["output_tput_per_decode_gpu"] is None]
    assert len(missing) == 2 and all(r["tput_per_gpu"] for r in missing)
    assert sum(r["ttft_p90_s"] is None for r in out) == 435 - 145


def test_legacy_power_without_a_verdict_stays_out_of_the_columns():
    out = parse(case("benchmarks"))
    legacy = [r for r in out if r["power_status"] == "legacy_unverified"]
    assert len(legacy) == 17
    for r in legacy:
        assert r["avg_power_w"] is None and r["joules_per_output_token"] is None
        assert r["power_valid"] is None
        assert "joules_per_output_token" in json.loads(r["extras"])["metrics"]  # kept, as extras
    assert {r["power_status"] for r in out} == {"legacy_unverified", "none"}


def test_september_rows_carry_id_and_valid_power_with_its_schema_version():
    rows_ = lookup_rows()
    out = parse(json.dumps(rows_).encode())
    assert [r["upstream_id"] for r in out] == [r["id"] for r in rows_]
    assert out[0]["id"] == "ix:440994"
    r = out[0]
    assert (r["power_status"], r["power_valid"], r["power_metric_schema_version"]) == ("valid", 1, 2)
    assert r["avg_power_w"] == pytest.approx(645.911)
    assert r["joules_per_output_token"] == pytest.approx(4.016292)
    # the published counts as published (the app's TP x EP); the view counts the GPUs
    assert (r["num_prefill_gpu"], r["num_decode_gpu"], r["pp"]) == (64, 64, 1)
    assert r["curve_date"] == date(2026, 9, 3) and r["curve_workflow_run_id"] == "2401"
    # the row's date is its curve's: the curve's run is the row's, so its start is the row's
    assert r["run_started_at"] == r["curve_run_started_at"] == "2026-09-03 22:38:12+00"
    extras = json.loads(r["extras"])
    assert extras["metrics"]["kv_cache_pool_tokens"] == 375856


@pytest.mark.parametrize(("valid", "version", "status", "kept"), [
    (1, 2, "valid", True), (1, 1, "unsupported_schema", True), (0, 2, "invalid", False)])
def test_the_power_verdict_decides_what_is_kept(valid, version, status, kept):
    row = lookup_rows()[0]
    row["metrics"].update(power_valid=valid, power_metric_schema_version=version)
    [out] = parse(json.dumps([row]).encode())
    assert out["power_status"] == status
    assert (out["joules_per_output_token"] is not None) is kept
    # withheld figures (power_valid 0) are served nowhere, extras included
    power_in_extras = [k for k in json.loads(out["extras"] or "{}").get("metrics", {})
                       if "power" in k or "joules" in k or "energy" in k]
    if valid == 0:
        assert power_in_extras == []


def test_an_unknown_field_goes_to_extras_and_is_reported():
    row = lookup_rows()[0]
    row["kv_offload_tier"] = "cpu"
    row["metrics"]["p95_ttft"] = 0.7
    report = ParseReport()
    [out] = parse(json.dumps([row]).encode(), report)
    extras = json.loads(out["extras"])
    assert extras["kv_offload_tier"] == "cpu" and extras["metrics"]["p95_ttft"] == 0.7
    assert report.unknown_fields == {"kv_offload_tier"}  # curve_* are documented


@pytest.mark.parametrize("field", ["hardware", "conc", "metrics", "date", "run_url"])
def test_a_missing_required_field_fails_naming_it(field):
    data = rows("benchmarks")[:3]
    del data[2][field]
    with pytest.raises(ParseError, match=rf"required field '{field}' is missing \(row 2 of"):
        parse(json.dumps(data).encode())


def test_an_error_answer_is_refused():
    with pytest.raises(ParseError, match="Unknown model"):
        parse(b'{"error": "Unknown model"}')


def test_ids_without_a_published_id_are_the_same_across_endpoints():
    # the history endpoint omits image; the run's rows keep their ids
    bench = {natural_id(r) for r in rows("benchmarks")}
    hist = {natural_id(r) for r in rows("benchmarks-history")}
    assert len(bench & hist) == 230


@pytest.mark.parametrize(("change", "message"), [
    (lambda r: r.update(conc=-4), "field 'conc' is -4: not a possible observation"),
    (lambda r: r.update(num_prefill_gpu=0), "field 'num_prefill_gpu' is 0"),
    (lambda r: r.update(date="2099-01-01"), "field 'date' is 2099-01-01, after the fetch"),
])
def test_an_impossible_observation_is_refused_naming_the_field(change, message):
    row = lookup_rows()[0]
    change(row)
    with pytest.raises(ParseError, match=re.escape(message) + r".*\(row 0 of"):
        parse(json.dumps([row]).encode())


@pytest.mark.parametrize("disagg", [True, False])
def test_a_multinode_aggregated_row_with_zero_decode_counts_parses(disagg):
    # InferenceX's runner writes an aggregated multinode deployment with decode TP, EP and
    # GPUs 0 (its test_multinode_aggregate_decode_fields_zero): an observation, kept as written
    [row] = parse(json.dumps([multinode_aggregated_row(disagg=disagg)]).encode())
    assert (row["is_multinode"], row["disagg"]) == (True, disagg)
    assert (row["prefill_tp"], row["num_prefill_gpu"]) == (8, 8)
    assert (row["decode_tp"], row["decode_ep"], row["num_decode_gpu"]) == (0, 0, 0)
    assert (row["tput_per_gpu"], row["input_tput_per_prefill_gpu"],
            row["output_tput_per_decode_gpu"]) == (8000 / 8, 2000 / 8, 6000 / 8)


@pytest.mark.parametrize(("change", "message"), [
    # zero decode counts are the multinode aggregated row's only: elsewhere still refused
    (lambda r: r.update(is_multinode=False), "field 'decode_tp' is 0"),
    (lambda r: r.update(num_decode_gpu=8), "field 'decode_tp' is 0"),
    (lambda r: r.update(decode_tp=-8), "field 'decode_tp' is -8"),
])
def test_zero_decode_counts_are_refused_outside_multinode_aggregated_rows(change, message):
    row = multinode_aggregated_row()
    change(row)
    with pytest.raises(ParseError, match=re.escape(message) + r".*\(row 0 of"):
        parse(json.dumps([row]).encode())


@pytest.mark.parametrize(("body", "message"), [
    (b'[{"id": "1", "id": "2"}]', "the JSON repeats key 'id' in one object in record 0"),
    (b'[{"metrics": {"tput_per_gpu": NaN}}]', "the JSON is malformed"),
    (b'[{"metrics": {"tput_per_gpu": 1e309}}]', "the JSON holds a number that is not finite"),
    (b"[" * 10_000 + b"]" * 10_000, "the JSON nests deeper than 1024 levels"),
])
def test_a_malformed_answer_is_refused_with_a_clear_error(body, message):
    with pytest.raises(ParseError, match=re.escape(message)):
        parse(body)


def test_availability_lists_the_raw_model_keys():
    raw = Raw(source="inferencex", url="http://x/api/v1/availability", body=case("availability"),
              fetched_at=datetime.now(UTC))
    assert parse_availability(raw) == ["dsr1", "dsv4", "glm5", "glm5.1", "gptoss120b", "kimik2.5",
                                       "llama70b", "minimaxm2.5", "minimaxm3", "qwen3.5"]
