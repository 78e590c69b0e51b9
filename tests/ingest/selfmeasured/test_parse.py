"""Each tool's real file parsed: the figures read by hand from the file, in seconds and per
InferenceX's definitions (TPOT, ITL, interactivity), missing percentiles NULL."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from ingest.selfmeasured.detect import read
from tests.ingest.selfmeasured.cases import (
    AIPERF,
    AIPERF_V1,
    ALL,
    GUIDELLM,
    LLMPERF,
    SGLANG,
    VLLM,
)
from warehouse.exceptions import ResultFileError


def parse(path):
    return read(path.name, path.read_bytes())


def test_every_real_file_is_recognised_by_its_keys():
    tools = {p.name: (parse(p).tool, parse(p).schema_version, len(parse(p).runs)) for p in ALL}
    assert tools == {
        VLLM.name: ("vllm", "bench serve", 1),
        SGLANG.name: ("sglang", "without server_info", 7),
        AIPERF.name: ("aiperf", "records (before schema_version)", 1),
        AIPERF_V1.name: ("aiperf", "1.0", 1),
        GUIDELLM.name: ("guidellm", "metadata v1", 1),
        LLMPERF.name: ("llmperf", "2023-08-31", 1)}


def test_aiperf_schema_1_reads_top_level_metrics():
    # values read by hand from the file: AIPerf 0.8.0, 64 requests at concurrency 4, ms
    parsed = parse(AIPERF_V1)
    assert (parsed.tool_version, parsed.schema_version) == ("0.8.0", "1.0")
    [run] = parsed.runs
    assert (run["conc"], run["completed_requests"], run["model_in_file"]) == (4, 64, "mock-model")
    # no error_request_count (AIPerf leaves it out of a clean run) and error_summary []: none
    assert (run["failed_requests"], run["incomplete_requests"]) == (0, 0)
    assert run["e2el_median_s"] == pytest.approx(0.6734304999999999e-3)
    assert run["e2el_p99_s"] == pytest.approx(15.14387014e-3)
    assert run["output_tput"] == pytest.approx(1022443.0554692096)
    assert run["total_tput"] == pytest.approx(2042654.398625265)
    assert run["duration_s"] == pytest.approx(0.034502655)
    assert (run["isl"], run["osl"]) == (550, round(35277 / 64))
    # non-streaming: no first token, no per-token latency, so no interactivity
    assert run["ttft_median_s"] is None and run["tpot_median_s"] is None
    assert run["interactivity"] is None
    assert run["run_at"] == datetime(2026, 4, 30, 9, 16, 38, 957302, tzinfo=UTC)


def test_vllm_milliseconds_become_seconds_and_interactivity_is_one_over_median_tpot():
    run = parse(VLLM).runs[0]
    assert run["ttft_median_s"] == pytest.approx(1412.9004654987511e-3)
    assert run["ttft_p99_s"] == pytest.approx(1996.1227116014925e-3)
    assert run["tpot_median_s"] == pytest.approx(18.048549724415526e-3)
    assert run["itl_p99_s"] == pytest.approx(100.28189458949782e-3)
    assert run["e2el_median_s"] == pytest.approx(3705.5828600005043e-3)
    assert run["ttft_p90_s"] is None and run["ttft_p999_s"] is None  # not in the file
    assert run["interactivity"] == pytest.approx(1000 / 18.048549724415526)
    assert (run["isl"], run["osl"], run["conc"], run["request_rate"]) == (1024, 128, 100, None)
    assert (run["completed_requests"], run["failed_requests"]) == (100, 0)
    assert run["output_tput"] == pytest.approx(3386.194265821373)
    assert run["total_tput"] == pytest.approx(30475.748392392357)
    assert run["run_at"] == datetime(2026, 1, 29, 3, 47, 29, tzinfo=UTC)
    assert run["model_in_file"] == "/workspace/gpt-oss"


def test_sglang_old_lines_lengths_are_measured_means_and_itl_gives_interactivity():
    runs = parse(SGLANG).runs
    first, sharegpt = runs[0], runs[5]
    assert first["request_rate"] == 1.0 and first["conc"] is None
    assert (first["isl"], first["osl"]) == (round(152612 / 300), round(160347 / 300)) == (509, 534)
    assert first["itl_median_s"] == pytest.approx(13.638956006616354e-3)
    assert first["tpot_median_s"] is None
    assert first["interactivity"] == pytest.approx(1000 / 13.638956006616354)
    assert "1 / median ITL" in first["interactivity_basis"]
    assert first["request_throughput"] == pytest.approx(300 / 298.3675805060193)
    assert first["total_tput"] == pytest.approx((152612 + 160347) / 298.3675805060193)
    assert sharegpt["request_rate"] == 4.0 and sharegpt["isl"] == round(269081 / 1200)
    assert json.loads(first["extras"])["random_input_len"] == 1024  # the CLI value, kept


def test_sglang_default_rate_infinity_and_trace_mean_no_fixed_rate(tmp_path):
    """bench_serving's --request-rate defaults to float("inf"), which json.dumps writes as the
    bare literal Infinity: such files were refused ("not a finite number: inf"). Infinity and
    "trace" are no fixed rate (NULL); a non-finite figure anywhere else is still refused."""
    lines = SGLANG.read_text().splitlines()
    assert '"request_rate": 1.0,' in lines[0] and '"request_rate": 2.0,' in lines[1]
    edited = tmp_path / "sglang_default_rate.jsonl"
    edited.write_text("\n".join([lines[0].replace('"request_rate": 1.0,', '"request_rate": '
                                                  'Infinity,'),
                                 lines[1].replace('"request_rate": 2.0,', '"request_rate": '
                                                  '"trace",'), *lines[2:]]))
    runs = parse(edited).runs
    assert [r["request_rate"] for r in runs[:3]] == [None, None, 4.0]
    assert runs[0]["output_tput"] == pytest.approx(537.4142851849319)  # the rest as before
    elsewhere = tmp_path / "sglang_infinite_ttft.jsonl"
    elsewhere.write_text(lines[0].replace('"median_ttft_ms": 85.74514742940664',
                                          '"median_ttft_ms": Infinity'))
    with pytest.raises(ResultFileError, match="field median_ttft_ms: not a finite number: inf"):
        parse(elsewhere)
    below = tmp_path / "sglang_negative_rate.jsonl"
    below.write_text(lines[0].replace('"request_rate": 1.0,', '"request_rate": -Infinity,'))
    with pytest.raises(ResultFileError, match="field request_rate: not a finite number: -inf"):
        parse(below)


def test_aiperf_records_inter_token_latency_is_tpot_and_chunk_latency_is_itl():
    parsed = parse(AIPERF)
    run = parsed.runs[0]
    assert run["ttft_median_s"] == pytest.approx(2369.317693e-3)
    assert run["tpot_median_s"] == pytest.approx(27.615130366666666e-3)
    assert run["itl_median_s"] == pytest.approx(22.673047999999998e-3)
    assert run["itl_p99_s"] == pytest.approx(140.53429476e-3)
    assert run.get("tpot_p999_s") is None  # AIPerf has no p99.9: NULL
    assert run["interactivity"] == pytest.approx(36.21203256049328)
    # its 11 errors (error_request_count) are all cancellations (error_summary: 11 x
    # RequestCancellationError, code 499): cut off, not failed
    assert (run["completed_requests"], run["failed_requests"], run["incomplete_requests"],
            run["conc"]) == (89, 0, 11, 100)
    assert run["total_tput"] == pytest.approx((48950 + 21624) / 9.317788951)  # derived
    assert (run["isl"], run["osl"]) == (550, round(21624 / 89))
    assert run["model_in_file"] == "openai/gpt-oss-20b"


def _aiperf_top_level(doc):
    """AIPerf's records export as AIPerf wrote it from 2025-10-10 (43b78902 .. db4f6397,
    JsonExportData): each metric at the top level as JsonMetricResult (unit, avg, p1…p99, min,
    max, std: no tag, header or count), ttft/ttst renamed time_to_first_token and
    time_to_second_token, no records, schema_version or aiperf_version."""
    rename = {"ttft": "time_to_first_token", "ttst": "time_to_second_token"}
    stats = ("unit", "avg", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "min",
             "max", "std")
    for tag, metric in doc.pop("records").items():
        doc[rename.get(tag, tag)] = {k: metric[k] for k in stats if metric.get(k) is not None}


def test_aiperf_top_level_layout_before_schema_version_is_read(tmp_path):
    """Refused as an unknown tool before: matches() wanted aiperf_version or records. The
    figures are the records export's own (the same run, read by hand from its file)."""
    parsed = parse(_edited(AIPERF, tmp_path, _aiperf_top_level, "profile_export_aiperf.json"))
    assert (parsed.tool, parsed.schema_version, parsed.tool_version) == (
        "aiperf", "top level (before schema_version)", None)
    [run] = parsed.runs
    assert run["ttft_median_s"] == pytest.approx(2369.317693e-3)  # time_to_first_token p50
    assert run["tpot_median_s"] == pytest.approx(27.615130366666666e-3)
    assert run["itl_p99_s"] == pytest.approx(140.53429476e-3)
    assert run["interactivity"] == pytest.approx(36.21203256049328)
    assert (run["completed_requests"], run["failed_requests"], run["incomplete_requests"],
            run["conc"]) == (89, 0, 11, 100)
    assert run["total_tput"] == pytest.approx((48950 + 21624) / 9.317788951)
    assert run["model_in_file"] == "openai/gpt-oss-20b"
    assert run["run_at"] == datetime(2025, 10, 3, 13, 13, 39, 146443, tzinfo=UTC)


def test_guidellm_successful_figures_counts_and_its_itl_as_tpot():
    parsed = parse(GUIDELLM)
    run = parsed.runs[0]
    assert parsed.tool_version == "0.5.0.dev0"
    assert run["conc"] == 4
    assert (run["completed_requests"], run["failed_requests"], run["incomplete_requests"]) \
        == (4, 0, 0)
    assert run["ttft_median_s"] == pytest.approx(171.52166366577148e-3)
    # TPOT per request from the 4 requests' inter_token_latency_ms, sorted 24.17863918539366,
    # 24.178653868062757, 24.178881799021074, 24.178931207367867 (ms): median the mean of the
    # middle two; p99.9 at rank 3 x 0.999 = 2.997, between the last two (linear)
    assert run["tpot_median_s"] == pytest.approx(
        (24.178653868062757 + 24.178881799021074) / 2 * 1e-3, rel=1e-12)
    assert run["tpot_p999_s"] == pytest.approx(
        (24.178881799021074 + 0.997 * (24.178931207367867 - 24.178881799021074)) * 1e-3,
        rel=1e-12)
    assert run["interactivity"] == pytest.approx(1 / run["tpot_median_s"])
    assert run["e2el_median_s"] == pytest.approx(24.90842366218567)  # already seconds
    assert run.get("itl_median_s") is None
    assert run["output_tput"] == pytest.approx(165.59511945248636)
    assert (run["isl"], run["osl"]) == (99, 1024)


def _guidellm_with_tpots(tmp_path, pairs, weighted_median_ms):
    """The real GuideLLM report with its 4 successful requests' (TPOT ms, output tokens) set
    to ``pairs`` and its token-weighted distribution's median as GuideLLM computes it."""
    def edit(doc):
        bench = doc["benchmarks"][0]
        for request, (tpot, tokens) in zip(bench["requests"]["successful"], pairs, strict=True):
            request.update(inter_token_latency_ms=tpot, output_tokens=tokens)
        dist = bench["metrics"]["inter_token_latency_ms"]["successful"]
        dist.update(median=weighted_median_ms, count=sum(t - 1 for _, t in pairs))
        dist["percentiles"].update(p50=weighted_median_ms)
    return _edited(GUIDELLM, tmp_path, edit)


def test_guidellm_tpot_and_interactivity_are_per_request_not_token_weighted(tmp_path):
    """GuideLLM's inter_token_latency_ms distribution weights each request by its output
    tokens - 1: with (TPOT, tokens) = (10 ms, 1001) and 3 x (50 ms, 11), 1000 of its 1030
    weights are 10 ms, so its median is 10 ms (interactivity 100 tokens/s/user); per request,
    as InferenceX, the sorted TPOTs 10, 50, 50, 50 have median 50 ms: 20 tokens/s/user."""
    report = _guidellm_with_tpots(tmp_path, [(10.0, 1001), (50.0, 11), (50.0, 11), (50.0, 11)],
                                  10.0)
    [run] = parse(report).runs
    assert run["tpot_median_s"] == pytest.approx(0.050)
    assert run["tpot_p90_s"] == pytest.approx(0.050)  # rank 3 x 0.9 = 2.7: between 50 and 50
    assert run["interactivity"] == pytest.approx(20.0)
    assert run["interactivity_basis"] == "1 / median TPOT (the tool reports no per-user rate)"
    assert "per request from every successful request" in run["definition_note"]


def test_guidellm_without_every_request_keeps_the_weighted_figures_and_says_so(tmp_path):
    """A report whose request sample is cut short (--sample-requests) or absent: the
    token-weighted median stays, labelled, since a partial sample is not every request."""
    def sampled(doc):
        doc["benchmarks"][0]["requests"]["successful"] = \
            doc["benchmarks"][0]["requests"]["successful"][:2]
    [run] = parse(_edited(GUIDELLM, tmp_path, sampled)).runs
    assert run["tpot_median_s"] == pytest.approx(24.178653868062757e-3)  # the file's median
    assert run["interactivity"] == pytest.approx(1000 / 24.178653868062757)
    assert run["interactivity_basis"].startswith("1 / GuideLLM's token-weighted median")
    assert "token-weighted" in run["definition_note"]


def _model_tokens(doc: dict) -> None:
    """The real LLMPerf file as if its counts were the model's: none above the 150 asked."""
    doc["results_number_output_tokens_max"] = "150"


def test_llmperf_seconds_duration_from_rate_and_interactivity_said_to_include_ttft(tmp_path):
    run = parse(_edited(LLMPERF, tmp_path, _model_tokens)).runs[0]
    assert run["conc"] == 16 and run["completed_requests"] == 112
    assert run["ttft_median_s"] == pytest.approx(6.561932362000334)
    assert run["e2el_p99_s"] == pytest.approx(18.989224514590898)
    assert run.get("tpot_median_s") is None and run.get("itl_median_s") is None
    assert run["interactivity"] == pytest.approx(8.382047222156121)
    assert "TTFT included" in run["interactivity_basis"]
    assert run["duration_s"] == pytest.approx(112 * 60 / 46.821420363866935)
    assert (run["isl"], run["osl"]) == (550, 159)
    assert run["output_tput"] == json.loads(LLMPERF.read_text())[
        "results_mean_output_throughput_token_per_s"]
    assert run["run_at"] == datetime(2024, 6, 12, 16, 21, 16, tzinfo=UTC)


def test_llmperf_counts_that_are_not_the_models_tokens_leave_the_token_figures_empty():
    """The real file: every request asked for 150 output tokens (stddev 0) and a server stops
    there, yet LLMPerf counted 150 to 167 (its Llama-2 tokenizer on Yi-1.5's text): its token
    figures are not the model's, so they stay empty and the note gives LLMPerf's own."""
    doc = json.loads(LLMPERF.read_text())
    assert (doc["mean_output_tokens"], doc["stddev_output_tokens"]) == (150, 0)
    assert float(doc["results_number_output_tokens_max"]) > 150
    run = parse(LLMPERF).runs[0]
    for column in ("isl", "osl", "total_input_tokens", "total_output_tokens", "output_tput",
                   "total_tput", "interactivity", "interactivity_basis"):
        assert run[column] is None, column
    # latencies and request counts stand
    assert run["completed_requests"] == 112
    assert run["ttft_median_s"] == pytest.approx(6.561932362000334)
    assert run["request_throughput"] == pytest.approx(46.821420363866935 / 60)
    note = run["definition_note"]
    assert "counted up to 167 output tokens" in note and "at most 150" in note
    assert f"output_tput {doc['results_mean_output_throughput_token_per_s']:.6g}" in note


def _edited(path, tmp_path, edit, name=None):
    doc = json.loads(path.read_text())
    edit(doc)
    out = tmp_path / (name or path.name)
    out.write_text(json.dumps(doc))
    return out


@pytest.mark.parametrize("path,edit,said", [
    (VLLM, lambda d: d.pop("completed"), "run 0, field completed: required field missing"),
    (VLLM, lambda d: d.update(duration=-3.0), "run 0, field duration: negative figure"),
    (VLLM, lambda d: d.update(median_ttft_ms=float("nan")),
     "run 0, field median_ttft_ms: not a finite number"),
    (AIPERF, lambda d: d["records"]["ttft"].update(unit="fortnights"),
     "run 0, field ttft.unit: unknown time unit 'fortnights'"),
    (AIPERF, lambda d: d.update(schema_version="2.0", aiperf_version="9"),
     "run 0, field schema_version: unknown AIPerf schema version '2.0'"),
    (GUIDELLM, lambda d: d["metadata"].update(version=7),
     "field metadata.version: unknown GuideLLM report version 7"),
    (LLMPERF, lambda d: d.update(version="2031-01-01"),
     "field version: unknown LLMPerf summary version '2031-01-01'"),
    (LLMPERF, lambda d: d.pop("results_num_completed_requests_per_min"),
     "run 0, field results_num_completed_requests_per_min: required field missing"),
])
def test_a_bad_file_is_refused_naming_file_run_and_field(tmp_path, path, edit, said):
    bad = _edited(path, tmp_path, edit)
    with pytest.raises(ResultFileError) as e:
        parse(bad)
    assert str(e.value).startswith(bad.name)
    assert said in str(e.value)


def test_an_unknown_tool_and_a_bad_jsonl_line_are_named(tmp_path):
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"tokens_per_second": 3.0, "name": "x"}))
    with pytest.raises(ResultFileError, match=r"other.json, run 0: unknown tool: its keys"):
        parse(other)
    lines = SGLANG.read_text().splitlines()
    broken = tmp_path / "broken.jsonl"
    broken.write_text("\n".join(lines[:3] + ['{"backend": "sglang", "duration": ']))
    with pytest.raises(ResultFileError, match=r"broken.jsonl, run 3: line 4 is not JSON"):
        parse(broken)
    negative = tmp_path / "neg.jsonl"
    negative.write_text("\n".join(lines[:2] + [lines[2].replace('"completed": 1200',
                                                                 '"completed": -1')]))
    with pytest.raises(ResultFileError, match=r"neg.jsonl, run 2, field completed: negative"):
        parse(negative)


@pytest.mark.parametrize("info,gpus", [
    ({"tp_size": 8}, 8),  # pp_size and dp_size at their default, 1
    ({"tp_size": 8, "pp_size": 2, "dp_size": 1}, 16),
    ({"tp_size": 4, "pp_size": 1, "dp_size": 2, "enable_dp_attention": False}, 8),
    # DP attention splits the tensor-parallel group: 8 GPUs, not 64
    ({"tp_size": 8, "pp_size": 1, "dp_size": 8, "enable_dp_attention": True}, 8),
    # 0.5.23 reports it resolved: dp_size 1, attn_dp_size 8
    ({"tp_size": 8, "pp_size": 1, "dp_size": 1, "attn_dp_size": 8}, 8),
    ({"tp_size": 2, "ep_size": 2, "nnodes": 2}, 2),  # experts and nodes share the TP GPUs
    ({"model_path": "m"}, None), (None, None), ({"tp_size": "8"}, None),
    ({"tp_size": 8, "dp_size": True}, None),  # a bool is not a size
    ({"tp_size": 8, "disaggregation_mode": "null"}, 8),  # not disaggregated: its default
    # one side of a prefill/decode pair (a router answered for its first worker): unread
    ({"tp_size": 8, "disaggregation_mode": "decode"}, None),
    ({"prefill": [{"tp_size": 8}], "decode": [{"tp_size": 8}]}, None),  # a router's, unread
])
def test_sglang_server_info_states_the_gpus_one_server_used(info, gpus):
    """tp_size x pp_size GPUs per data-parallel replica, dp_size replicas unless DP
    attention shares the tensor-parallel GPUs (sglang's data_parallel_controller)."""
    from ingest.selfmeasured.sglang import server_gpus

    found = server_gpus(info)
    assert (found[0] if found else None) == gpus
