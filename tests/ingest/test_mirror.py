"""The built-in mirror: the MLPerf files sources.toml pins to a commit are carried in the package
(ingest/mirror), and a refresh that cannot reach them reads the carried copy with the pinned
sha256, saying so in the source snapshot; with the mirror off, or with no carried copy, the
source fails as before."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import duckdb
import pytest

from ingest.config import load_sources
from ingest.mirror import CARRIED_PREFIX, MIRROR_DIR, carried_copies, carried_copy
from ingest.mlperf.load import DEFAULT_ROUNDS, MlperfConfig
from ingest.mlperf_rules.load import DEFAULT_SHA256, DEFAULT_URL, RulesConfig
from ingest.refresh import refresh
from tests.conftest import make_settings
from tests.helpers import REPO, carried_cases, free_port
from warehouse.exceptions import ConfigError

UPSTREAM = "https://raw.githubusercontent.com"
ROUNDS = {"v4.1", "v5.1", "v6.0", "v6.1"}


def _snapshot(tmp: Path) -> duckdb.DuckDBPyConnection:
    var = tmp / "var"
    current = json.loads((var / "CURRENT").read_text())["file"]
    return duckdb.connect(str(var / "snapshots" / current), read_only=True)


def _repo_sources_at(tmp: Path, base: str, **extra: str) -> Path:
    """The repository's sources.toml, pins and all, with every MLPerf URL moved to ``base``,
    Azure at ``azure`` (or off), curated from the repository's data, and ``extra`` lines added
    to a section (``extra={"mlperf": "builtin_mirror = false"}``)."""
    text = (REPO / "sources.toml").read_text().replace(UPSTREAM, base)
    text = text.replace('dir = "data"', f'dir = "{REPO / "data"}"')
    text = text.replace('base_url = "https://inferencex.semianalysis.com"', f'base_url = "{base}"')
    text = text.replace('url = "https://prices.azure.com/api/retail/prices"',
                        f'url = "{extra.pop("azure", "http://127.0.0.1:9/none")}"')
    for section, line in extra.items():
        text = text.replace(f"[{section}]\n", f"[{section}]\n{line}\n", 1)
    path = tmp / "sources.toml"
    path.write_text(text)
    return path


def test_every_pinned_default_has_a_carried_copy_that_is_the_pinned_file():
    assert set(DEFAULT_ROUNDS) == ROUNDS
    for name, spec in DEFAULT_ROUNDS.items():
        assert spec.sha256, name
        copy = carried_copy(spec.sha256)
        assert copy is not None, f"{name}: no carried copy"
        assert copy.upstream == spec.url  # the configured file itself, at its pinned commit
        assert f"/{copy.commit}/" in spec.url
        body = copy.read()
        assert hashlib.sha256(body).hexdigest() == spec.sha256 and len(body) == copy.size
    rules = carried_copy(DEFAULT_SHA256)
    assert rules is not None and rules.upstream == DEFAULT_URL and f"/{rules.commit}/" in DEFAULT_URL
    assert hashlib.sha256(rules.read()).hexdigest() == DEFAULT_SHA256
    # the repository's sources.toml says what the defaults say
    repo = load_sources(REPO / "sources.toml")
    assert repo["mlperf"].rounds == MlperfConfig().rounds
    assert (repo["mlperf_rules"].url, repo["mlperf_rules"].sha256) == (DEFAULT_URL, DEFAULT_SHA256)
    # every carried file is listed, and the test cases carry the same bytes for the same file
    listed = {c.path for c in carried_copies()}
    assert listed == set(MIRROR_DIR.rglob("*.gz"))
    by_sha = {c.sha256: c for c in carried_copies()}
    for case in carried_cases():
        assert case["sha256"] in by_sha, case["path"]
        assert by_sha[case["sha256"]].commit == case["commit"]
    notice = (MIRROR_DIR / "NOTICE").read_text()
    assert "MLCommons" in notice and "Apache License, Version 2.0" in notice


def test_a_damaged_carried_copy_is_refused(tmp_path):
    import gzip
    from dataclasses import replace

    from warehouse.exceptions import SourceError

    copy = carried_copy(DEFAULT_SHA256)
    assert copy is not None
    damaged = tmp_path / "rules.adoc.gz"
    damaged.write_bytes(gzip.compress(copy.read() + b"\n"))
    with pytest.raises(SourceError, match="damaged: sha256 .* PROVENANCE.toml records 3222"):
        replace(copy, path=damaged).read()


def test_an_offline_refresh_publishes_every_carried_round_and_the_rules(tmp_path):
    dead = f"http://127.0.0.1:{free_port()}"  # nothing listens: every MLPerf fetch fails
    azure = f"{dead}/api/retail/prices"
    settings = make_settings(tmp_path, _repo_sources_at(tmp_path, dead, azure=azure))
    report = refresh(settings)
    by = {s.source: s for s in report.sources}
    assert by["mlperf"].status == "updated" and by["mlperf_rules"].status == "updated"
    assert by["curated"].status == "updated"
    # Azure prices change, so nothing is carried for them: the source fails, saying why
    assert by["azure_prices"].status == "failed" and "127.0.0.1" in by["azure_prices"].message
    assert report.status == "partial" and report.snapshot_id  # published, Azure named failed
    for name in ROUNDS:
        detail = by["mlperf"].details[name]
        assert detail["status"] == "updated" and detail["rows"] > 0
        assert detail["source"] == CARRIED_PREFIX + DEFAULT_ROUNDS[name].url
    assert by["mlperf_rules"].details["source"] == CARRIED_PREFIX + DEFAULT_URL
    assert sum("could not be fetched" in w and "built-in mirror" in w
               for w in by["mlperf"].warnings) == len(ROUNDS)
    assert any("could not be fetched" in w for w in by["mlperf_rules"].warnings)
    lines = report.summary_lines()  # the terminal says it too, one line per source
    assert any(line.startswith("mlperf: updated") and "built-in mirror" in line
               and all(r in line for r in ROUNDS) for line in lines)
    assert any(line.startswith("mlperf_rules: updated") and "built-in mirror" in line
               for line in lines)
    # MLCommons' own v6.0 summary: the MI355X cluster's accelerator names say x87 and x94
    # where its accelerators (nodes x per node, and its Total Accelerators) are 88 and 96;
    # the rows keep the published count and the disagreement is a warning, with samples
    copy = carried_copy(DEFAULT_ROUNDS["v6.0"].sha256 or "")
    assert copy is not None
    v60 = json.loads(copy.read())
    marked = [r for r in v60 if (m := re.search(r"\(x(\d+)\)", r.get("Accelerator") or ""))
              and int(m[1]) not in (r.get("Total Accelerators"), r.get("a#"))]
    assert {(r["System"], r["Total Accelerators"]) for r in marked} == {
        ("AMD MI355X Custom Cluster", 88), ("AMD MI355X Custom Cluster", 96)}
    [count] = [v for v in report.validation if v["expectation"] == (
        "mlperf_result: a count in the accelerator's name (xN) is the system's or a node's "
        "accelerators")]
    assert len(marked) == 8
    assert (count["severity"], count["unexpected_count"]) == ("warning", len(marked))
    assert "87xMI355X" in count["sample"]

    con = _snapshot(tmp_path)
    try:
        # per GPU means per every GPU: rows whose own words disagree on how many are divided
        # by neither count (no per-accelerator figure, no cost); the other rows are
        cluster = {r[0] for r in con.execute(
            "SELECT id FROM mlperf_result WHERE round = 'v6.0' AND system_name = "
            "'AMD MI355X Custom Cluster' AND NOT is_power").fetchall()}
        divided = {r[0] for r in con.execute("SELECT id FROM result_per_accelerator").fetchall()}
        priced = {r[0] for r in con.execute("SELECT id FROM cost_input").fetchall()}
        assert len(cluster) == len(marked) and not cluster & (divided | priced)
        assert len(divided) > 1000 and priced
        snaps = {r[0]: r[1:] for r in con.execute(
            "SELECT label, url, sha256 FROM source_snapshot "
            "WHERE source IN ('mlperf', 'mlperf_rules')").fetchall()}
        assert set(snaps) == ROUNDS | {"rules"}
        for name in ROUNDS:
            spec = DEFAULT_ROUNDS[name]
            assert snaps[name] == (f"carried copy of {spec.url}", spec.sha256)
        assert snaps["rules"] == (f"carried copy of {DEFAULT_URL}", DEFAULT_SHA256)
        per_round = dict(con.execute(
            "SELECT round, count(*) FROM mlperf_result GROUP BY round").fetchall())
        assert set(per_round) == ROUNDS and all(n > 100 for n in per_round.values())
        # the bytes are upstream's: what is parsed from them is still measured
        assert con.execute("SELECT DISTINCT evidence FROM mlperf_result").fetchall() == [("measured",)]
        assert con.execute("SELECT count(*) FROM benchmark_rule").fetchone()[0] > 0
    finally:
        con.close()


def test_the_network_back_finds_the_same_bytes_unchanged(tmp_path, server):
    """After an offline first run, the real files (same sha256) change nothing."""
    dead = f"http://127.0.0.1:{free_port()}"
    settings = make_settings(tmp_path, _repo_sources_at(tmp_path, dead))
    assert refresh(settings).snapshot_id
    for copy in carried_copies():
        server.files[copy.upstream.removeprefix(UPSTREAM)] = copy.read()
    settings = make_settings(tmp_path, _repo_sources_at(tmp_path, server.url("")))
    report = refresh(settings)
    by = {s.source: s for s in report.sources}
    assert by["mlperf"].status == "unchanged" and by["mlperf_rules"].status == "unchanged"
    assert all(by["mlperf"].details[r]["status"] == "unchanged (same sha256)" for r in ROUNDS)
    assert not by["mlperf"].warnings


def test_with_the_mirror_off_an_offline_refresh_fails_as_before(tmp_path):
    dead = f"http://127.0.0.1:{free_port()}"
    off = "builtin_mirror = false"
    settings = make_settings(tmp_path, _repo_sources_at(
        tmp_path, dead, mlperf=off, mlperf_rules=off, inferencex=off, cloud_prices=off,
        curated="enabled = false"))
    report = refresh(settings)
    by = {s.source: s for s in report.sources}
    assert report.status == "failed" and report.snapshot_id is None
    assert by["cloud_prices"].status == "failed" and "carried" not in by["cloud_prices"].message
    assert by["inferencex"].status == "failed" and "carried" not in by["inferencex"].message
    assert by["mlperf"].status == "failed" and by["mlperf_rules"].status == "failed"
    for name in ROUNDS:
        assert "carried" not in by["mlperf"].details[name]["message"]
        assert "source" not in by["mlperf"].details[name]
    assert not (tmp_path / "var" / "CURRENT").exists()


def test_a_round_with_no_pin_or_no_carried_copy_fails_as_before(tmp_path):
    dead = f"http://127.0.0.1:{free_port()}"
    (tmp_path / "sources.toml").write_text(
        "[mlperf]\n[mlperf.rounds]\n"
        f'"v6.1" = "{dead}/summary.csv"\n'  # a plain URL: no pin
        f'"v9.9" = {{ url = "{dead}/v9.9.json", sha256 = "{"0" * 64}" }}\n'  # nothing carried
        "[mlperf_rules]\nenabled = false\n[azure_prices]\nenabled = false\n"
        "[curated]\nenabled = false\n")
    report = refresh(make_settings(tmp_path, tmp_path / "sources.toml"))
    mlperf = report.sources[0] if report.sources[0].source == "mlperf" else report.sources[1]
    assert mlperf.status == "failed" and report.status == "failed"
    assert set(mlperf.stale) == {"v6.1", "v9.9"} and not mlperf.warnings


def test_pinned_bytes_that_differ_are_refused_and_not_replaced(tmp_path, server):
    """A pinned file never changes: other bytes at its URL are refused, naming both sha256s,
    and the carried copy does not paper over them (the fetch worked)."""
    copy = carried_copy(DEFAULT_ROUNDS["v6.1"].sha256 or "")
    assert copy is not None
    server.files["/summary.csv"] = copy.read().replace(b"NVIDIA", b"NVIDIA ", 1)
    (tmp_path / "sources.toml").write_text(
        "[mlperf]\n[mlperf.rounds]\n"
        f'"v6.1" = {{ url = "{server.url("/summary.csv")}", sha256 = "{copy.sha256}" }}\n'
        "[mlperf_rules]\nenabled = false\n[azure_prices]\nenabled = false\n"
        "[curated]\nenabled = false\n")
    report = refresh(make_settings(tmp_path, tmp_path / "sources.toml"))
    mlperf = next(s for s in report.sources if s.source == "mlperf")
    assert mlperf.status == "failed"
    why = mlperf.stale["v6.1"]
    assert f"but sources.toml pins {copy.sha256}" in why and "not the pinned file" in why
    assert "source" not in mlperf.details["v6.1"]


@pytest.mark.parametrize("section, message", [
    ('[mlperf.rounds]\n"v6.1" = { url = "x.csv", sha256 = "abc" }', "[mlperf.rounds.v6.1"),
    ('[mlperf.rounds]\n"v6.1" = { url = "x.csv", sha = "' + "0" * 64 + '" }', "[mlperf.rounds.v6.1"),
    ('[mlperf.rounds]\n"v6.1" = 5', "round 'v6.1': a URL or { url = ..., sha256 = ... }"),
    ('[mlperf_rules]\nsha256 = "ABC"', "[mlperf_rules.sha256]"),
])
def test_a_bad_pin_is_a_clear_config_error(tmp_path, section, message):
    path = tmp_path / "sources.toml"
    path.write_text(section + "\n")
    with pytest.raises(ConfigError) as e:
        load_sources(path)
    assert message in str(e.value)


def test_a_rules_url_given_without_a_sha256_is_not_held_to_the_default_pin():
    assert RulesConfig().sha256 == DEFAULT_SHA256
    assert RulesConfig(url="/srv/rules.adoc").sha256 is None
    assert RulesConfig(url="/srv/rules.adoc", sha256="a" * 64).sha256 == "a" * 64


def test_the_built_package_carries_the_mirror(tmp_path):
    """A wheel built from the repository holds every carried copy, its provenance and NOTICE,
    so an installed perfledger has its mirror."""
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                    "--no-build-isolation", "--disable-pip-version-check", "-w", str(tmp_path),
                    str(REPO)], check=True, capture_output=True, timeout=240)
    wheel = next(tmp_path.glob("perfledger-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    entries = tomllib.loads((MIRROR_DIR / "PROVENANCE.toml").read_text())["file"]
    assert {"ingest/mirror/PROVENANCE.toml", "ingest/mirror/NOTICE"} <= names
    assert {f"ingest/mirror/{e['path']}" for e in entries} <= names
    assert not any(n.startswith("tests/") for n in names)  # the test cases stay in the repository
