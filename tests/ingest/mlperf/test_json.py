"""MLCommons' summary_results.json (ingest.mlperf.json_format through parse): the real v5.1
file, format recognition from the content, and bad input naming round, record and key."""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime

import pytest

from ingest.http import Raw
from ingest.mlperf.parse import ParseReport, parse
from ingest.mlperf.units import UNIT_CORRECTIONS
from tests.helpers import V51_JSON
from warehouse.exceptions import ParseError

V51 = V51_JSON


def raw_of(body: bytes, url: str = "https://example.org/summary.csv") -> Raw:
    """Bytes at a URL whose name says nothing true about the format (it is read from them)."""
    return Raw(source="mlperf", url=url, body=body, fetched_at=datetime.now(UTC))


def rows_of(records: list | dict | str, round_name: str = "v5.1") -> list[dict]:
    body = records if isinstance(records, str) else json.dumps(records)
    return list(parse(raw_of(body.encode()), round_name=round_name, snapshot_id="s"))


def checker_units(record: dict) -> str:
    """The unit MLCommons' submission checker gives a v5.1 record: its llama3.1-8b Interactive
    results are Tokens/s though the file says Queries/s (mlcommons/inference PR #2564)."""
    if (record["Model"], record["Scenario"]) == ("llama3.1-8b", "Interactive"):
        return "Tokens/s"
    return record["Performance_Units"]


@pytest.fixture(scope="module")
def records() -> list[dict]:
    return json.loads(V51.read_text())


@pytest.fixture(scope="module")
def parsed(records) -> tuple[list[dict], ParseReport]:
    report = ParseReport()
    rows = list(parse(raw_of(V51.read_bytes()), round_name="v5.1", snapshot_id="s",
                      report=report))
    return rows, report


def test_every_record_lands_once(records, parsed):
    rows, _ = parsed
    perf = [r for r in rows if not r["is_power"]]
    assert len(records) == len(perf) == 1448
    assert [r["row_number"] for r in perf] == list(range(1448))
    expected = Counter((r["Category"], r["Scenario"], checker_units(r)) for r in records)
    assert Counter((r["division"], r["scenario"], r["units"]) for r in perf) == expected
    assert len({r["id"] for r in rows}) == len(rows)
    assert {r["source_format"] for r in rows} == {"json"} and {r["round"] for r in rows} == {"v5.1"}


def test_keys_map_onto_the_csv_columns(records, parsed):
    rows, report = parsed
    perf = [r for r in rows if not r["is_power"]]
    for record, row in zip(records, perf, strict=True):
        assert row["organization"] == record["Submitter"]
        assert row["model"] == record["UsedModel"] and row["mlperf_model"] == record["Model"]
        assert row["system_id"] == record["ID"] and row["details_url"] == record["Details"]
        assert row["result"] == record["Performance_Result"]
        assert row["framework"] == (record["Software"] or None)
    assert any("ColorKey" in w for w in report.warnings)
    assert json.loads(perf[0]["extras"])["ColorKey"] == records[0]["ColorKey"]


def test_llama31_8b_interactive_is_in_tokens_as_the_publishers_checker_says(records, parsed):
    """The v5.1 file labels its 8 llama3.1-8b Interactive results Queries/s; they count tokens
    (Dell XE9680L: 102,907 Interactive beside 143,309 Tokens/s Offline), as MLCommons' checker
    says since PR #2564. The row carries Tokens/s and keeps the published spelling in extras."""
    rows, _ = parsed
    published = [i for i, r in enumerate(records)
                 if (r["Model"], r["Scenario"]) == ("llama3.1-8b", "Interactive")]
    assert {records[i]["Performance_Units"] for i in published} == {"Queries/s"}
    assert published == [143, 260, 297, 313, 431, 500, 518, 554]
    corrected = [r for r in rows if "units_as_published" in json.loads(r["extras"] or "{}")]
    assert [r["row_number"] for r in corrected] == published
    for row in corrected:
        extras = json.loads(row["extras"])
        assert row["units"] == "Tokens/s" and not row["is_power"]
        assert extras["units_as_published"] == "Queries/s"
        assert extras["units_corrected_by"] == UNIT_CORRECTIONS[0].source
        assert extras["ColorKey"] == records[row["row_number"]]["ColorKey"]  # kept beside
    dell = {r["scenario"]: (r["result"], r["units"]) for r in rows
            if (r["system_id"], r["model"]) == ("5.1-0024", "llama3.1-8b")}
    assert dell == {"Interactive": (102907.0, "Tokens/s"), "Offline": (143309.0, "Tokens/s"),
                    "Server": (128787.0, "Tokens/s")}
    assert "pull/2564" in UNIT_CORRECTIONS[0].quote
    assert '"Interactive": "Tokens/s"' in UNIT_CORRECTIONS[0].quote


def test_open_division_variants_of_one_official_model_stay_apart(records, parsed):
    rows, _ = parsed
    variants = {r["UsedModel"] for r in records if r["Model"] == "resnet"}
    assert len(variants) > 10
    landed = {r["model"] for r in rows if r["mlperf_model"] == "resnet"}
    assert landed == variants


def test_total_accelerators_is_nodes_times_accelerators_per_node(records, parsed):
    rows, _ = parsed
    perf = [r for r in rows if not r["is_power"]]
    checked = 0
    for record, row in zip(records, perf, strict=True):
        if record["a#"] == "":  # no accelerator count: never a per-accelerator figure or cost
            assert row["total_accelerators"] is None
            assert row["total_accelerators_basis"] == (
                "none" if record["Accelerator"] in ("", "N/A") else "unknown")
        elif "(x" not in record["Accelerator"]:
            assert row["total_accelerators"] == record["Nodes"] * int(record["a#"])
            assert row["total_accelerators_basis"] == "computed"
            checked += 1
    assert checked > 500
    [multi] = [r for r in perf if r["number_of_nodes"] == 18][:1]
    assert multi["total_accelerators"] == 18 * multi["accelerators_per_node"]


def carried_round(round_name: str) -> list[dict]:
    """A default round's records from the package's built-in mirror (v4.1, v6.0)."""
    from ingest.mirror import carried_copy
    from ingest.mlperf.load import DEFAULT_ROUNDS

    copy = carried_copy(DEFAULT_ROUNDS[round_name].sha256 or "")
    assert copy is not None
    return json.loads(copy.read())


@pytest.mark.parametrize(("round_name", "bases"), [
    ("v4.1", {"computed": 31}), ("v5.1", {"computed": 12, "none": 12})])
def test_a_power_row_says_how_its_accelerator_count_was_obtained(records, round_name, bases):
    """Neither file publishes Total Accelerators: a power row's count is nodes x a#, computed
    like its performance row's, never "published" (it once copied the computed total)."""
    rows = rows_of(records if round_name == "v5.1" else carried_round(round_name), round_name)
    perf = {r["row_number"]: r for r in rows if not r["is_power"]}
    power = [r for r in rows if r["is_power"]]
    assert Counter(r["total_accelerators_basis"] for r in power) == bases
    for row in power:
        twin = perf[row["row_number"]]
        assert (row["total_accelerators"], row["total_accelerators_basis"]) == (
            twin["total_accelerators"], twin["total_accelerators_basis"])
    if round_name == "v4.1":
        [h200] = [r for r in power if r["model"] == "resnet50" and r["scenario"] == "Offline"
                  and r["system_name"] == "NVIDIA H200 (8x H200-SXM-141GB, MaxQ, TensorRT)"]
        assert (h200["units"], round(h200["result"], 2)) == ("Watts", 4954.03)
        assert (h200["total_accelerators"], h200["total_accelerators_basis"]) == (8, "computed")
        assert perf[h200["row_number"]]["result"] == 556234.0


def test_a_published_total_is_the_publishers(records):
    """v6.0's summary publishes Total Accelerators: the rows carry it as published, not
    recomputed (the two agree on every v6.0 record; where they would not, the total is the
    publisher's and a validation warning says so)."""
    v60 = carried_round("v6.0")
    perf = [r for r in rows_of(v60, "v6.0") if not r["is_power"]]
    counted = [(rec, row) for rec, row in zip(v60, perf, strict=True)
               if row["accelerator_mix"] != "none"]
    assert len(counted) == 487
    for record, row in counted:
        assert (row["total_accelerators"], row["total_accelerators_basis"]) == (
            record["Total Accelerators"], "published")
        assert "Total Accelerators" not in json.loads(row["extras"] or "{}")


def test_power_is_its_own_row_joined_by_key(records, parsed):
    rows, _ = parsed
    with_power = [r for r in records if "Power_Result" in r]
    power = [r for r in rows if r["is_power"]]
    assert len(power) == len(with_power) == 24
    by_key = {(r["platform"], r["model"], r["scenario"]): r for r in rows if not r["is_power"]}
    for record, row in zip(with_power, power, strict=True):
        assert row["result"] == record["Power_Result"] and row["units"] == record["Power_Units"]
        perf = by_key[(record["Platform"], record["UsedModel"], record["Scenario"])]
        assert perf["result"] == record["Performance_Result"] and perf["id"] != row["id"]


@pytest.mark.parametrize("body, message", [
    ({"results": []}, "v4.1: JSON but not a list of result objects (found an object with keys results)"),
    ([1, 2], "v4.1: record 0: not an object"),
    ("<!DOCTYPE html><html>rate limited</html>", "v4.1: neither a JSON list of result objects "
                                                  "nor a summary CSV (40 bytes; how the file "
                                                  "starts is in the refresh log)"),
    ("[{\"ID\": 1,", "v4.1: the JSON is malformed"),
])
def test_a_file_that_is_not_a_summary_names_the_round_and_what_was_found(body, message):
    with pytest.raises(ParseError) as e:
        rows_of(body, "v4.1")
    assert message in str(e.value)
    if "how the file starts" in message:  # the bytes go to the operator, not the message
        assert "DOCTYPE" not in str(e.value) and e.value.context == {"source": "mlperf"}
        assert e.value.excerpt == "<!DOCTYPE html><html>rate limited</html>"


def record(**over) -> dict:
    base = {"ID": "9.9-0001", "Submitter": "Acme", "Availability": "available",
            "Category": "closed", "Suite": "datacenter", "System": "Box", "Platform": "box",
            "UsedModel": "llama2-70b-99", "Model": "llama2-70b-99", "Scenario": "Offline",
            "Nodes": 2, "Accelerator": "NVIDIA H100-SXM-80GB", "a#": 8, "version": "v9.9",
            "Performance_Result": 1000.5, "Performance_Units": "Tokens/s"}
    return {**base, **over}


@pytest.mark.parametrize("bad, field", [
    ({"Performance_Result": None}, "Performance_Result"),
    ({"Performance_Units": ""}, "Performance_Units"),
    ({"Performance_Result": "fast"}, "Performance_Result"),
    ({"Performance_Result": True}, "Performance_Result"),
    ({"a#": 2.5}, "a#"),
    ({"Scenario": "Warp"}, "Scenario"),
])
def test_a_bad_record_names_round_record_and_key(bad, field):
    with pytest.raises(ParseError) as e:
        rows_of([record(), record(Platform="other", **bad)], "v9.9")
    assert str(e.value).startswith("mlperf v9.9: record 1")
    assert field in str(e.value) and e.value.context["record"] == 1


def test_a_duplicate_key_names_both_records():
    with pytest.raises(ParseError, match="record 1 repeats the natural key of record 0"):
        rows_of([record(), record(ID="other id")], "v9.9")


def test_missing_keys_are_null_and_power_units_must_be_power():
    [row] = rows_of([{k: v for k, v in record().items() if k not in ("Suite", "Nodes")}], "v9.9")
    assert row["system_type"] is None and row["number_of_nodes"] is None
    assert row["total_accelerators"] is None and row["total_accelerators_basis"] == "unknown"
    with pytest.raises(ParseError, match="Power_Units: 'Tokens/s' is not a power unit"):
        rows_of([record(Power_Result=5.0, Power_Units="Tokens/s")], "v9.9")


def test_a_json_file_at_a_csv_url_is_read_as_json_and_the_csv_at_a_json_url_as_csv():
    [row] = rows_of([record()], "v9.9")
    assert row["source_format"] == "json" and row["total_accelerators"] == 16
    csv_body = (b"Organization,Availability,Division,SystemName,Platform,Model,Scenario,Result,"
                b"Units,version\nAcme,available,closed,Box,box,llama2-70b-99,Offline,10,Tokens/s,"
                b"v9.9\n")
    [row] = list(parse(raw_of(csv_body, "https://x/summary_results.json"), round_name="v9.9",
                       snapshot_id="s"))
    assert row["source_format"] == "csv"


@pytest.mark.parametrize("body, message", [
    ('[{"ID": "a", "Submitter": "NVIDIA", "Submitter": "Other"}]',
     "v4.1: the JSON repeats key 'Submitter' in one object in record 0 (line 1)"),
    ("[" * 10_000 + "]" * 10_000, "v4.1: the JSON nests deeper than 1024 levels"),
    ("[{\"Performance_Result\": 1e309}]", "v4.1: the JSON holds a number that is not finite"),
])
def test_hostile_json_is_a_parse_error_of_its_round(body, message):
    with pytest.raises(ParseError) as e:
        rows_of(body, "v4.1")
    assert message in str(e.value)


def test_a_ten_thousand_deep_round_fails_alone(tmp_path, server):
    """The other round loads; the deep one is named, never a RecursionError traceback."""
    from ingest.refresh import refresh
    from tests.conftest import make_settings, write_sources

    server.files["/deep.json"] = b"[" * 10_000 + b"]" * 10_000
    server.files["/v5.1.json"] = V51.read_bytes()
    rounds = (f'rounds = {{ "v4.1" = "{server.url("/deep.json")}", '
              f'"v5.1" = "{server.url("/v5.1.json")}" }}')
    report = refresh(make_settings(tmp_path, write_sources(tmp_path / "s.toml", mlperf=rounds)))
    assert report.status == "partial", report.message
    [mlperf] = report.sources
    assert list(mlperf.stale) == ["v4.1"] and mlperf.rows > 0
    assert "v4.1 has never loaded: the JSON nests deeper than 1024 levels" in report.message


@pytest.mark.parametrize("spelling", ["NVIDIA\u200b", "\u202eNVIDIA", "ＮＶＩＤＩＡ", "NVI\u00adDIA"])
def test_an_invisible_or_fullwidth_name_is_the_same_organization(spelling):
    """A zero-width space, a bidi override, fullwidth letters or a soft hyphen made a second
    "NVIDIA" that filters missed: the name is stored as NFKC without them, the original kept."""
    [plain] = rows_of([record(Submitter="NVIDIA")])
    [odd] = rows_of([record(Submitter=spelling)])
    assert odd["organization"] == "NVIDIA" and odd["id"] == plain["id"]
    assert json.loads(odd["extras"])["original"] == {"organization": spelling}
    assert plain["extras"] is None or "original" not in json.loads(plain["extras"])


def test_filters_read_names_the_same_way():
    from api.params import ResultParams

    f = ResultParams(organization=["nvi\u200bdia,\u202eAMD", "ｎｖｉｄｉａ"]).filters()
    assert f.organization == ["nvidia", "AMD"]
