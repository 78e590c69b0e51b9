"""ingest.context: what a source's load function can rely on — the shrink guard, raw bytes
stored and recorded once with the URL redacted, a failure recorded with its context."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from ingest.context import LoadContext, SourceConfig, SourceOutcome
from ingest.http import DEFAULT_POLICY, Raw, make_client
from warehouse.exceptions import ParseError, ShrinkError
from warehouse.storage.staging import Staging
from warehouse.storage.store import Layout


@pytest.fixture
def ctx(tmp_path):
    layout = Layout(tmp_path / "var")
    layout.ensure()
    stage = Staging(layout, "s", 64)
    with make_client() as client:
        yield LoadContext(stage=stage, client=client, layout=layout, config=SourceConfig(),
                          base_dir=tmp_path, policy=DEFAULT_POLICY, outcome=SourceOutcome("x"))
    stage.discard()


def test_shrink_guard(ctx):
    ctx.check_shrink("x", old=100, new=50)  # exactly half: accepted
    with pytest.raises(ShrinkError, match="x: 49 rows where the last good refresh had 100"):
        ctx.check_shrink("x", old=100, new=49)
    ctx.accept_shrink = True
    ctx.check_shrink("x", old=100, new=0)
    ctx.check_shrink("x", old=0, new=0)


def test_record_stores_bytes_once_and_redacts_the_url(ctx):
    raw = Raw(source="x", url="https://user:pw@host/f.csv?sig=SECRET&v=1", body=b"abc",
              fetched_at=datetime.now(UTC))
    first = ctx.record(raw, kind="k", label="L", parser_version="p/1")
    again = ctx.record(raw, kind="k", label="L", parser_version="p/1")
    assert first == again
    [(url, raw_path)] = ctx.con.execute("SELECT url, raw_path FROM source_snapshot").fetchall()
    assert "SECRET" not in url and "pw" not in url and url.startswith("https://host/f.csv")
    assert (ctx.layout.root / raw_path).read_bytes() == b"abc"
    assert ctx.outcome.bytes_fetched == 6  # two fetches were counted


def test_previous_reads_the_latest_snapshot_of_a_label(ctx):
    assert ctx.previous("x", "L") is None
    for body in (b"one", b"two"):
        ctx.record(Raw(source="x", url="u", body=body, fetched_at=datetime.now(UTC)),
                   kind="k", label="L", parser_version="p")
    assert ctx.previous("x", "L")["byte_size"] == 3
    assert ctx.previous("x", "other") is None


def test_a_failure_keeps_type_retryable_and_context_with_the_url_redacted():
    outcome = SourceOutcome("mlperf")
    outcome.fail(ParseError("mlperf: line 3: bad", source="mlperf",
                            url="https://h/x.csv?token=SECRET", line=3))
    assert outcome.status == "failed" and outcome.message == "mlperf: line 3: bad"
    assert outcome.error == {"type": "ParseError", "retryable": False, "source": "mlperf",
                             "url": "https://h/x.csv?token=***", "line": 3}
    outcome.fail(OSError("disk"))
    assert outcome.error == {"type": "OSError", "retryable": False}
    assert outcome.as_dict()["error"] == outcome.error


def test_resolve_is_relative_to_the_sources_file(ctx, tmp_path):
    assert ctx.resolve("data") == str(tmp_path / "data")
    assert ctx.resolve("/abs/path") == "/abs/path"
    assert ctx.resolve("https://x/y") == "https://x/y"
    assert Path(ctx.resolve("../up")).resolve() == (tmp_path.parent / "up").resolve()
