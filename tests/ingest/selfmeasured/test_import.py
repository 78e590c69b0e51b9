"""perfledger import end to end on a real warehouse: the real files land as self_measured with
the stated hardware through staging → validate → publish; again is a no-op; removal is
recorded; a bad file stores nothing and the others still import."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from ingest.refresh import refresh
from ingest.selfmeasured.load import Statement, import_spec, remove_spec
from tests.conftest import make_settings, write_sources
from tests.helpers import REPO, copy_data_dir
from tests.ingest.selfmeasured.cases import ALL, LLMPERF, SGLANG, VLLM
from warehouse.storage.store import Layout

H100 = Statement("nvidia-h100-sxm", 8, "gpt-oss-120b", framework="vllm", precision="mxfp4",
                 note="runpod")


@pytest.fixture(scope="module")
def curated_only(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("selfmeasured")
    sources = write_sources(tmp / "sources.toml", curated=f'dir = "{REPO / "data"}"')
    assert refresh(make_settings(tmp, sources)).status == "published"
    return tmp


@pytest.fixture
def settings(curated_only, tmp_path):
    copy_data_dir(curated_only / "var", tmp_path / "var")
    return make_settings(tmp_path, curated_only / "sources.toml")


def current(settings) -> duckdb.DuckDBPyConnection:
    return duckdb.connect(str(Layout(settings.data_path).read_current().path), read_only=True)


def test_every_real_file_lands_as_self_measured_with_the_stated_hardware(settings):
    report = refresh(settings, specs=[import_spec(list(ALL), H100)])
    assert report.status == "published", report.as_dict()
    files = report.sources[0].details["files"]
    assert [(f["tool"], f["runs"], f["status"]) for f in files] == [
        ("vllm", 1, "imported"), ("sglang", 7, "imported"), ("aiperf", 1, "imported"),
        ("aiperf", 1, "imported"), ("guidellm", 1, "imported"), ("llmperf", 1, "imported")]
    con = current(settings)
    rows = con.execute("SELECT evidence, accelerator_id, gpus, framework, precision, note, "
                       "count(*) FROM self_observation GROUP BY ALL").fetchall()
    # 1 + 7 + 1 + 1 + 1 + 1 runs in the six files
    assert rows == [("self_measured", "nvidia-h100-sxm", 8, "vllm", "mxfp4", "runpod", 12)]
    # the raw bytes are kept content-addressed, like every source's
    layout = Layout(settings.data_path)
    for f in files:
        assert layout.raw_path(f["sha256"]).read_bytes() == next(
            p for p in ALL if p.name == f["file"]).read_bytes()
    # per every GPU: the tool's whole-deployment figure divided by the stated count
    y, t, src = con.execute("SELECT output_tput_per_gpu, tput_per_gpu, source FROM observation "
                            "WHERE file_name = ?", [VLLM.name]).fetchone()
    assert (y, t, src) == (pytest.approx(3386.194265821373 / 8),
                           pytest.approx(30475.748392392357 / 8), "self_measured")


def test_importing_the_same_bytes_again_changes_nothing(settings):
    first = refresh(settings, specs=[import_spec([VLLM], H100)])
    again = refresh(settings, specs=[import_spec([VLLM], H100)])
    assert first.status == "published"
    assert again.status == "unchanged" and again.snapshot_id is None
    assert again.sources[0].details["files"][0]["status"] == "unchanged"
    assert Layout(settings.data_path).read_current().id == first.snapshot_id
    other = refresh(settings, specs=[import_spec([VLLM], Statement("nvidia-h200", 8, "x"))])
    assert other.exit_code == 1
    assert "already imported as 3eef7d22e0dfb302 with 8 x nvidia-h100-sxm" in other.message


def test_the_same_bytes_imported_again_by_a_newer_parser_are_parsed_again(settings,
                                                                           monkeypatch):
    """An import stored by the parser before LLMPerf's token check (selfmeasured/2, its
    figures as that parser stored them: osl 159) is parsed again when imported again, and
    then unchanged."""
    from ingest.selfmeasured import llmperf, load

    monkeypatch.setattr(load, "PARSER_VERSION", "selfmeasured/2")
    monkeypatch.setattr(llmperf, "_model_tokens_only", lambda run, reader: run)
    first = refresh(settings, specs=[import_spec([LLMPERF], H100)])
    assert first.status == "published"
    assert current(settings).execute("SELECT osl FROM self_observation").fetchall() == [(159,)]
    monkeypatch.undo()
    again = refresh(settings, specs=[import_spec([LLMPERF], H100)])
    assert again.status == "published", again.as_dict()
    assert again.sources[0].details["files"][0]["status"] == "imported"
    con = current(settings)
    assert con.execute("SELECT osl, output_tput FROM self_observation").fetchall() == [
        (None, None)]
    assert con.execute("SELECT s.parser_version FROM self_import i JOIN source_snapshot s "
                       "ON s.id = i.source_snapshot_id").fetchall() == [(load.PARSER_VERSION,)]
    third = refresh(settings, specs=[import_spec([LLMPERF], H100)])
    assert third.sources[0].details["files"][0]["status"] == "unchanged"


def test_removal_deletes_the_runs_and_is_recorded(settings):
    refresh(settings, specs=[import_spec([SGLANG, LLMPERF], H100)])
    removed = refresh(settings, specs=[remove_spec("fe6271824a47e806")])
    assert removed.status == "published"
    assert removed.sources[0].details["removed"] == {
        "import_id": "fe6271824a47e806", "file": SGLANG.name, "runs": 7}
    con = current(settings)
    assert con.execute("SELECT count(*) FROM self_observation").fetchone() == (1,)
    record = con.execute("SELECT removed_at IS NOT NULL, removed_by_run FROM self_import "
                         "WHERE id = 'fe6271824a47e806'").fetchone()
    assert record == (True, removed.id)
    assert con.execute("SELECT status FROM refresh_run WHERE id = ?", [removed.id]).fetchone() \
        == ("published",)
    again = refresh(settings, specs=[remove_spec("fe6271824a47e806")])
    assert again.exit_code == 1 and "already removed" in again.message


def test_a_bad_file_stores_nothing_and_the_rest_imports(settings, tmp_path):
    doc = json.loads(VLLM.read_text())
    doc["median_tpot_ms"] = -1.0
    bad = tmp_path / "bad_vllm.json"
    bad.write_text(json.dumps(doc))
    report = refresh(settings, specs=[import_spec([bad, LLMPERF], H100)])
    assert report.status == "partial" and report.exit_code == 1
    files = {f["file"]: f for f in report.sources[0].details["files"]}
    assert files["bad_vllm.json"]["error"] == \
        "bad_vllm.json, run 0, field median_tpot_ms: negative figure: -1.0"
    assert files[LLMPERF.name]["status"] == "imported"
    con = current(settings)
    assert con.execute("SELECT DISTINCT file_name FROM self_observation").fetchall() == \
        [(LLMPERF.name,)]
    assert con.execute("SELECT count(*) FROM source_snapshot WHERE url = 'file:bad_vllm.json'"
                       ).fetchone() == (0,)
    import hashlib
    assert not Layout(settings.data_path).raw_path(
        hashlib.sha256(bad.read_bytes()).hexdigest()).exists()


def _with_server_info(path: Path, folder: Path, **args) -> Path:
    """The real SGLang file with each line's ``server_info`` as sglang 0.5.4.post3 writes it
    (``dataclasses.asdict(server_args)`` and the version: the parallelism keys below, named
    and defaulted as in its ``srt/server_args.py``; an API key among them)."""
    info = {"model_path": "meta-llama/Llama-3.3-70B-Instruct", "tp_size": 1, "pp_size": 1,
            "dp_size": 1, "ep_size": 1, "enable_dp_attention": False, "nnodes": 1,
            "base_gpu_id": 0, "gpu_id_step": 1, "api_key": "sk-not-to-be-kept",
            "version": "0.5.4.post3", **args}
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    out = folder / f"sglang_tp{info['tp_size']}_dp{info['dp_size']}.jsonl"
    out.write_text("\n".join(json.dumps({**doc, "server_info": info}) for doc in lines))
    return out


def test_a_count_sglang_server_info_contradicts_is_refused(settings, tmp_path):
    """SGLang's later files carry the server's arguments. A server of tp_size 8 used 8 GPUs
    (4 data-parallel replicas of tp_size 2 likewise): --count 4 would serve every per-GPU
    figure twice too high, so it is refused naming the count to state, and nothing is
    stored; 16 reads as two such servers behind a router and is stored as stated. The
    server's API key is kept nowhere but the file's own bytes."""
    tp8 = _with_server_info(SGLANG, tmp_path, tp_size=8)
    dp4 = _with_server_info(SGLANG, tmp_path, tp_size=2, dp_size=4)
    before = Layout(settings.data_path).read_current().id
    report = refresh(settings, specs=[import_spec([tp8, dp4], Statement(
        "nvidia-h200", 4, "llama3.3-70b"))])
    assert report.status == "failed" and report.exit_code == 1, report.as_dict()
    files = report.sources[0].details["files"]
    assert [f["error"] for f in files] == [
        f"{name}, run 0, field server_info: the server's arguments in the file (server_info) "
        f"say it used 8 GPUs ({how}), and --count 4 is not 8 nor a whole number of such "
        "servers behind a router: state --count 8 for one server"
        for name, how in ((tp8.name, "tp_size 8 x pp_size 1 x dp_size 1"),
                          (dp4.name, "tp_size 2 x pp_size 1 x dp_size 4"))]
    assert Layout(settings.data_path).read_current().id == before
    two = refresh(settings, specs=[import_spec([tp8], Statement("nvidia-h200", 16, "m"))])
    assert two.status == "published", two.as_dict()
    con = current(settings)
    assert con.execute("SELECT DISTINCT gpus, count(*) FROM self_observation GROUP BY ALL"
                       ).fetchall() == [(16, 7)]
    stored = str(con.execute("SELECT * FROM self_observation").fetchall()) + \
        str(con.execute("SELECT * FROM self_import").fetchall())
    assert "sk-not-to-be-kept" not in stored + report.message + two.message
    assert "sk-not-to-be-kept" not in json.dumps(report.as_dict(), default=str)


def test_the_accelerator_is_stored_as_the_warehouse_spells_it(settings):
    """`--accelerator NVIDIA-H100-SXM` is nvidia-h100-sxm (the id every join and filter uses:
    stored as typed, the run found no price and no accelerator filter), and the same bytes
    stated in either spelling are the same import."""
    first = refresh(settings, specs=[import_spec([VLLM], Statement("NVIDIA-H100-SXM", 8, "m"))])
    assert first.status == "published", first.as_dict()
    con = current(settings)
    assert con.execute("SELECT DISTINCT accelerator_id FROM self_observation").fetchall() == [
        ("nvidia-h100-sxm",)]
    assert con.execute("SELECT accelerator_id FROM self_import").fetchall() == [
        ("nvidia-h100-sxm",)]
    again = refresh(settings, specs=[import_spec([VLLM], Statement("nvidia-h100-sxm", 8, "m"))])
    assert again.status == "unchanged"
    # the model likewise: the same command twice is one import, whatever its case
    for _ in range(2):
        typed = refresh(settings, specs=[import_spec([SGLANG], Statement(
            "nvidia-h100-sxm", 8, "GPT-OSS-120B"))])
    assert typed.status == "unchanged", typed.message


def test_an_import_stored_with_the_accelerator_as_typed_is_stored_again(settings):
    """Imports made before ids were stored as the warehouse spells them: importing the same
    bytes again stores their runs with the id, so they find prices and filters."""
    assert refresh(settings, specs=[import_spec([VLLM], H100)]).status == "published"
    ref = Layout(settings.data_path).read_current()
    with duckdb.connect(str(ref.path)) as old:  # as an earlier version stored it
        for table in ("self_import", "self_observation"):
            old.execute(f"UPDATE {table} SET accelerator_id = 'NVIDIA-H100-SXM'")  # noqa: S608
    report = refresh(settings, specs=[import_spec([VLLM], H100)])
    assert report.status == "published", report.as_dict()
    assert report.sources[0].details["files"][0]["status"] == "imported"
    con = current(settings)
    for table in ("self_import", "self_observation"):
        assert con.execute(f"SELECT DISTINCT accelerator_id FROM {table}").fetchall() == [  # noqa: S608
            ("nvidia-h100-sxm",)], table


def test_an_unknown_accelerator_publishes_nothing(settings):
    before = Layout(settings.data_path).read_current().id
    report = refresh(settings, specs=[import_spec([VLLM], Statement("h100", 8, "m"))])
    assert report.status == "failed"
    assert "unknown accelerator 'h100'; known ids:" in report.message
    assert Layout(settings.data_path).read_current().id == before


@pytest.mark.parametrize("typed,said", [
    ("8x-nvidia-h100-sxm", "'8x-nvidia-h100-sxm' is a system of 8 x nvidia-h100-sxm, not an "
     "accelerator: state the accelerator and every one the run used, e.g. --accelerator "
     "nvidia-h100-sxm --count 8 for one 8x-nvidia-h100-sxm (8 x N for N of them)"),
    ("GROQ-LPX-RACK", "'groq-lpx-rack' is a rack of 256 x groq-lpu-next, not an accelerator"),
])
def test_a_system_or_rack_id_is_refused_naming_the_accelerator_to_state(settings, typed, said):
    """`--accelerator 8x-nvidia-h100-sxm --count 1` was stored as 1 GPU: the vLLM run's
    3386.19 output tokens/s over 8 H100s read as 3386.19 per GPU (8 x the true 3386.19 / 8 =
    423.27) and its cost 8 x too low. --count counts accelerators, so a system id leaves it
    ambiguous: refused, nothing published."""
    before = Layout(settings.data_path).read_current().id
    report = refresh(settings, specs=[import_spec([VLLM], Statement(typed, 1, "gpt-oss-120b"))])
    assert report.status == "failed", report.as_dict()
    assert said in report.message
    assert Layout(settings.data_path).read_current().id == before


def test_the_command_line_imports_lists_and_removes(settings, monkeypatch):
    from cli.main import app

    monkeypatch.setenv("PERFLEDGER_DATA_DIR", str(settings.data_path))
    monkeypatch.setenv("PERFLEDGER_SOURCES", str(settings.sources))
    runner = CliRunner()
    out = runner.invoke(app, ["import", str(VLLM), "--accelerator", "nvidia-h100-sxm",
                              "--count", "8", "--model", "my-finetune"])
    assert out.exit_code == 0, out.output
    assert f"imported: {VLLM.name} (vllm, 1 run(s)), import 3eef7d22e0dfb302" in out.output
    assert "kept as given (unmapped)" in out.output
    listed = runner.invoke(app, ["import", "--list", "--json"])
    rows = json.loads(listed.output)
    assert [(r["id"], r["model"], r["model_mapping"], r["removed_at"]) for r in rows] == [
        ("3eef7d22e0dfb302", "my-finetune", "unmapped", None)]
    gone = runner.invoke(app, ["import", "--remove", "3eef7d22e0dfb302"])
    assert gone.exit_code == 0 and "removed: import 3eef7d22e0dfb302" in gone.output
    missing = runner.invoke(app, ["import", str(VLLM)])
    assert missing.exit_code == 1
    assert "needs --accelerator, --count, --model" in missing.output
