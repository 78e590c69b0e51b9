"""MLPerf summary CSV parsing (ingest.mlperf.csv_format through parse): the real v6.1 file,
and bad input."""

from __future__ import annotations

import csv
import io
from collections import Counter
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ingest.http import Raw
from ingest.mlperf import parse as mlperf
from ingest.mlperf.csv_format import HEADERS
from ingest.mlperf.rows import _NULLS, NATURAL_KEY, TYPES
from tests.helpers import SUMMARY_CSV
from warehouse.exceptions import ParseError
from warehouse.model.vocabulary import SCENARIOS, normalise_model, normalise_scenario


def raw_of(body: bytes) -> Raw:
    return Raw(source="mlperf", url="file://test.csv", body=body, fetched_at=datetime.now(UTC))


@pytest.fixture(scope="module")
def real_rows() -> list[dict]:
    body = SUMMARY_CSV.read_bytes()
    return list(mlperf.parse(raw_of(body), round_name="v6.1", snapshot_id="s1"))


@pytest.fixture(scope="module")
def csv_rows() -> list[dict]:
    with SUMMARY_CSV.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_real_file_gives_every_row_once(real_rows, csv_rows):
    assert len(real_rows) == len(csv_rows) == 492
    assert len({r["id"] for r in real_rows}) == 492
    keys = Counter(tuple(r[k] for k in NATURAL_KEY) for r in real_rows)
    assert max(keys.values()) == 1


def test_every_csv_column_is_kept_and_typed(real_rows, csv_rows):
    for parsed, original in zip(real_rows, csv_rows, strict=True):
        for header, col in HEADERS.items():
            kind = TYPES[col]
            value = original[header].strip()
            if col == "total_accelerators" and parsed["accelerator_mix"] == "none":
                assert parsed[col] is None and parsed["total_accelerators_basis"] == "none"
                continue
            if value in ("", "None"):
                assert parsed[col] is None, (header, value)
            elif kind == "float":
                assert parsed[col] == float(value)
            elif kind == "int":
                assert parsed[col] == int(value)
            elif kind == "bool":
                assert parsed[col] is (value in ("1", "True"))
            else:
                assert parsed[col] == value


def test_spot_value_gb200_deepseek_interactive(real_rows):
    [row] = [r for r in real_rows if r["organization"] == "NVIDIA"
             and r["platform"] == "GB200-NVL72_GB200-186GB_aarch64x72_TRT"
             and r["model_id"] == "deepseek-r1" and r["scenario"] == "Interactive"]
    assert row["result"] == 240274.0
    assert row["units"] == "Tokens/s"
    assert row["total_accelerators"] == 72
    assert row["evidence"] == "measured"
    assert row["round"] == "v6.1"
    assert row["inferred"] is True  # as published; see the column comment


def test_normalisation_keeps_the_original(real_rows):
    spellings = {(r["model"], r["model_id"]) for r in real_rows if "8b" in r["model_id"]}
    assert ("llama3_1-8b", "llama3.1-8b") in spellings
    assert ("llama3.1-8b", "llama3.1-8b") in spellings
    lower = [r for r in real_rows if r["scenario_raw"] == "offline"]
    assert lower and all(r["scenario"] == "Offline" for r in lower)
    assert {r["scenario"] for r in real_rows} == {"Offline", "Server", "Interactive",
                                                  "SingleStream", "MultiStream"}
    llama70 = [r for r in real_rows if r["model"] == "llama2-70b-99.9"]
    assert llama70 and {r["model_family"] for r in llama70} == {"llama2-70b"}
    mixed = [r for r in real_rows if " + " in (r["accelerator_model_name"] or "")]
    assert mixed and {r["accelerator_mix"] for r in mixed} == {"mixed"}
    none = [r for r in real_rows if r["accelerator_model_name"] == "N/A"]
    assert none and {r["accelerator_mix"] for r in none} == {"none"}


HEADER = ",".join(HEADERS)


def _line(**over: str) -> str:
    base = {h: "" for h in HEADERS}
    base.update(Organization="Acme", Availability="available", Division="closed",
                SystemName="Box", Platform="box1", Model="llama2-70b-99.9",
                MlperfModel="llama2-70b-99.9", Scenario="Offline", Result="10.5",
                Units="Tokens/s", version="v6.1", inferred="0", has_power="False")
    base.update(over)
    out = io.StringIO()
    csv.writer(out).writerow(base.values())
    return out.getvalue().strip()


def test_missing_required_column_names_it():
    header = HEADER.replace("Units,", "")
    body = (header + "\n").encode()
    with pytest.raises(ParseError, match="required column.*Units"):
        list(mlperf.parse(raw_of(body), round_name="v6.1", snapshot_id="s"))


def test_unknown_column_is_kept_and_reported():
    body = (HEADER + ",NewThing\n" + _line() + ",42\n").encode()
    report = mlperf.ParseReport()
    [row] = list(mlperf.parse(raw_of(body), round_name="v6.1", snapshot_id="s", report=report))
    assert row["extras"] == '{"NewThing": "42"}'
    assert any("NewThing" in w for w in report.warnings)


@pytest.mark.parametrize("line, reason", [
    ('"Acme","available","closed"', "3 fields"),
    (_line(Result="fast"), "Result"),
    (_line(Scenario="Warp"), "unknown scenario"),
    (_line(Result=""), "required value Result"),
    (_line(inferred="maybe"), "not a boolean"),
])
def test_bad_row_names_line_and_reason(line, reason):
    body = (HEADER + "\n" + _line() + "\n" + line + "\n").encode()
    with pytest.raises(ParseError, match=rf"line 3.*{reason}|{reason}.*line 3|line 3"):
        list(mlperf.parse(raw_of(body), round_name="v6.1", snapshot_id="s"))
    with pytest.raises(ParseError) as e:
        list(mlperf.parse(raw_of(body), round_name="v6.1", snapshot_id="s"))
    assert reason in str(e.value)


def test_duplicate_natural_key_is_an_error():
    body = (HEADER + "\n" + _line() + "\n" + _line(Scenario="offline") + "\n").encode()
    with pytest.raises(ParseError, match="line 3 repeats the natural key of line 2"):
        list(mlperf.parse(raw_of(body), round_name="v6.1", snapshot_id="s"))


def test_not_utf8_is_a_clear_error():
    with pytest.raises(ParseError, match="not UTF-8"):
        list(mlperf.parse(raw_of(HEADER.encode() + b"\n\xff\xfe"), round_name="v6.1", snapshot_id="s"))


@given(st.from_regex(r"[a-z]{2,8}[0-9](_[0-9])?-[0-9]{1,3}b", fullmatch=True))
def test_model_normalisation_is_idempotent_and_merges_underscores(name):
    once = normalise_model(name)
    assert normalise_model(once) == once
    assert normalise_model(name.replace(".", "_")) == once
    assert "_" not in once


@given(st.sampled_from(["offline", "Offline", "OFFLINE", "server", "Interactive",
                        "singlestream", "multistream", "SingleStream"]))
def test_scenarios_normalise_case_insensitively(value):
    assert normalise_scenario(value) in SCENARIOS


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40))
def test_any_text_field_round_trips(text):
    body = (HEADER + "\n" + _line(notes=text) + "\n").encode()
    [row] = list(mlperf.parse(raw_of(body), round_name="v6.1", snapshot_id="s"))
    assert row["notes"] == (None if text.strip() in _NULLS else text.strip())
