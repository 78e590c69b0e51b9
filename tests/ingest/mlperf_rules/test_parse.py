"""Rules document parsing: the real document's limits, and rows that cannot be read."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from ingest.http import Raw
from ingest.mlperf_rules import parse as mlperf_rules
from tests.helpers import RULES_ADOC
from warehouse.exceptions import ParseError


def parse_text(text: str) -> list[dict]:
    raw = Raw(source="mlperf_rules", url="x", body=text.encode(), fetched_at=datetime.now(UTC))
    return list(mlperf_rules.parse(raw, snapshot_id="s"))


@pytest.fixture(scope="module")
def limits() -> dict[tuple[str, str], tuple[float, float]]:
    rows = parse_text(RULES_ADOC.read_text())
    return {(r["model_family"], r["scenario"]): (r["ttft_ms"], r["tpot_ms"]) for r in rows}


@pytest.mark.parametrize("model, server, interactive", [
    ("llama2-70b", (2000, 200), (450, 40)),
    ("llama3.1-8b", (2000, 100), (500, 30)),
    ("llama3.1-405b", (6000, 175), (4500, 80)),
    ("deepseek-r1", (2000, 80), (1500, 15)),
    ("gpt-oss-120b", (3000, 80), (2000, 20)),
])
def test_real_document_limits(limits, model, server, interactive):
    assert limits[(model, "Server")] == server
    assert limits[(model, "Interactive")] == interactive


def test_single_limit_row_is_server(limits):
    assert limits[("mixtral-8x7b", "Server")] == (2000, 200)
    assert ("mixtral-8x7b", "Interactive") not in limits


def test_reference_tokens_and_speculative_allowances():
    rows = parse_text(RULES_ADOC.read_text())
    by = {(r["model_family"], r["scenario"]): r for r in rows}
    assert by[("llama2-70b", "Interactive")]["reference_tokens"] == 294.45
    assert "MTP head" in by[("deepseek-r1", "Interactive")]["speculative_decoding"]
    assert "speculative-num-steps=3" in by[("gpt-oss-120b", "Interactive")]["speculative_decoding"]
    assert by[("llama2-70b", "Interactive")]["speculative_decoding"] is None
    assert all(r["evidence"] == "benchmark_rule" for r in rows)
    assert all(r["line_number"] > 0 and "TTFT/TPOT" in r["quote"] for r in rows)


def test_unreadable_limit_row_is_reported_by_line():
    text = "intro\n|Language |QA |Foo-1b |data | 1 | acc | TTFT/TPOT: soon ms/later ms\n"
    with pytest.raises(ParseError, match=r"line 2 \(Foo-1b\)"):
        parse_text(text)


def test_document_without_limits_is_an_error():
    with pytest.raises(ParseError, match="no TTFT/TPOT limits"):
        parse_text("= MLPerf rules\n\nnothing here\n")


@pytest.mark.parametrize("phrase", [
    "Server: TTFT/TPOT: 2000 ms/80 ms. Interactive: TTFT/TPOT: 450 ms/40 ms.",
    "Server: TTFT 2000 ms, TPOT 80 ms. Interactive: TTFT 450 ms, TPOT 40 ms.",
    "Server: TTFT: 2000ms; TPOT: 80ms. Interactive: TTFT: 450ms; TPOT: 40ms.",
    "Server: TTFT of 2,000 ms and TPOT of 80 ms. Interactive: TTFT of 450 ms and TPOT of 40 ms.",
])
def test_plausible_phrasings_of_a_limit_read_the_same(phrase):
    text = f"|Language |QA |Foo-1b |data | 1 | acc | {phrase} footnote (TTFT) which measures\n"
    rows = parse_text(text)
    assert {(r["scenario"], r["ttft_ms"], r["tpot_ms"]) for r in rows} == {
        ("Server", 2000.0, 80.0), ("Interactive", 450.0, 40.0)}
