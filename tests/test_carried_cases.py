"""The real MLPerf files the repository carries for its tests (tests/cases/mlperf): each is the
upstream file byte for byte, as its provenance record says, and every test reads these copies."""

from __future__ import annotations

import gzip
import hashlib
import re

from tests.helpers import REAL_CASES, REAL_DATA, RULES_ADOC, SUMMARY_CSV, V51_JSON, carried_cases


def test_every_carried_file_is_the_recorded_upstream_bytes():
    entries = carried_cases()
    assert {e["path"] for e in entries} == {
        p.relative_to(REAL_CASES).as_posix() for p in REAL_CASES.rglob("*.gz")}
    for e in entries:
        body = gzip.decompress((REAL_CASES / e["path"]).read_bytes())
        assert hashlib.sha256(body).hexdigest() == e["sha256"], e["path"]
        assert len(body) == e["bytes"], e["path"]
        assert re.fullmatch(r"[0-9a-f]{40}", e["commit"]), e["path"]
        assert e["upstream"].startswith(f"https://raw.githubusercontent.com/{e['repository']}/")
        assert e["upstream"].endswith("/" + e["path"].removesuffix(".gz").split("/")[-1])


def test_the_files_tests_read_are_the_unpacked_carried_copies():
    by_name = {e["path"].removesuffix(".gz"): e["sha256"] for e in carried_cases()}
    for path in (SUMMARY_CSV, V51_JSON, RULES_ADOC):
        assert path.is_relative_to(REAL_DATA)
        assert hashlib.sha256(path.read_bytes()).hexdigest() == \
            by_name[path.relative_to(REAL_DATA).as_posix()]


def test_the_carried_files_name_their_origin_and_licence():
    notice = (REAL_CASES / "NOTICE").read_text()
    assert "MLCommons" in notice and "Apache License, Version 2.0" in notice
