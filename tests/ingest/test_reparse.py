"""A newer parser reads the bytes a source already gave: whether the server answers 304 or the
same file is read again, each source's rows are parsed anew (the 304's bytes from the raw
store), the snapshot records the new parser, and the refresh after that finds nothing new."""

from __future__ import annotations

import hashlib
import importlib

import duckdb
import pytest

from ingest.refresh import refresh
from tests.conftest import make_settings, write_sources
from tests.helpers import REPO, RULES_ADOC
from tests.ingest.inferencex import cases as inferencex
from warehouse.storage.store import Layout


def rules_over_http(tmp, server):
    server.files["/rules.adoc"] = RULES_ADOC.read_bytes()
    return write_sources(tmp / "sources.toml", mlperf_rules=f'url = "{server.url("/rules.adoc")}"')


def curated_files(tmp, server):
    return write_sources(tmp / "sources.toml", curated=f'dir = "{REPO / "data"}"')


def inferencex_over_http(tmp, server):
    inferencex.serve(server)
    return inferencex.sources(tmp / "sources.toml", server)


# source -> (its loader module, the sources file, the request answered 304 the second time)
SOURCES = {"mlperf_rules": ("ingest.mlperf_rules.load", rules_over_http, "/rules.adoc"),
           "curated": ("ingest.curated.load", curated_files, None),
           "inferencex": ("ingest.inferencex.load", inferencex_over_http, inferencex.BENCHMARKS)}


@pytest.mark.parametrize("source", SOURCES)
def test_a_newer_parser_reads_unchanged_bytes_again(source, tmp_path, server, monkeypatch):
    module, sources, path = SOURCES[source]
    settings = make_settings(tmp_path, sources(tmp_path, server))
    assert refresh(settings).status == "published"
    assert refresh(settings).status == "unchanged"
    if path is not None:  # the second refresh asked conditionally, and the server said 304
        assert server.hits(path)[-1].headers.get("if-none-match")
    loader = importlib.import_module(module)
    newer = f"{loader.PARSER_VERSION}+next"
    monkeypatch.setattr(loader, "PARSER_VERSION", newer)
    report = refresh(settings)
    assert report.status == "published", report.as_dict()
    [outcome] = report.sources
    assert (outcome.source, outcome.status) == (source, "updated")
    ref = Layout(tmp_path / "var").read_current()
    assert ref is not None
    with duckdb.connect(str(ref.path), read_only=True) as con:
        read = dict(con.execute("SELECT label, parser_version FROM source_snapshot "
                                "WHERE source = ?", [source]).fetchall())
    if source == "inferencex":  # an answer is recorded only when it brings new observations
        assert read["aliases"] == newer
        assert outcome.details["DeepSeek-R1-0528"]["status"] == "no new observations"  # parsed
    else:
        assert set(read.values()) == {newer}
    assert refresh(settings).status == "unchanged"


def test_bytes_the_raw_store_lost_are_fetched_again_in_full(tmp_path, server, monkeypatch):
    """A 304 to a newer parser whose stored bytes are gone asks the server again without a
    condition, instead of parsing nothing or failing, and the raw store has them again."""
    settings = make_settings(tmp_path, rules_over_http(tmp_path, server))
    assert refresh(settings).status == "published"
    layout = Layout(tmp_path / "var")
    stored = layout.raw_path(hashlib.sha256(RULES_ADOC.read_bytes()).hexdigest())
    stored.unlink()
    loader = importlib.import_module("ingest.mlperf_rules.load")
    monkeypatch.setattr(loader, "PARSER_VERSION", f"{loader.PARSER_VERSION}+next")
    report = refresh(settings)
    assert report.status == "published", report.as_dict()
    asked = [h.headers.get("if-none-match") is not None for h in server.hits("/rules.adoc")]
    assert asked == [False, True, False]  # first, conditional (304), then in full
    assert stored.read_bytes() == RULES_ADOC.read_bytes()
