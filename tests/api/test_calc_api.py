"""The calculators over the API, from the warehouse's own specs: the article's numbers."""

from __future__ import annotations

import csv
import io

import pytest


def decode(client, hardware, model, **kw):
    r = client.get("/v1/calc/decode-bound", params={"hardware": hardware, "model": model, **kw})
    assert r.status_code == 200, r.text
    return r.json()


@pytest.mark.parametrize("hardware, model, expected", [
    ("nvidia-h100-sxm", "illustrative-1b", 2954),
    ("nvidia-h100-sxm", "illustrative-10b", 314),
    ("nvidia-h200", "illustrative-10b", 450),
    ("8x-nvidia-h200", "illustrative-10b", 3599),
    ("8x-nvidia-h100-sxm", "illustrative-100b", 264),
    ("nvidia-gb200-nvl72", "illustrative-100b", 5684),
    ("nvidia-gb200-nvl72", "illustrative-1t-dense", 574),
    ("nvidia-gb200-nvl72", "illustrative-1t-moe", 17442),
    ("8x-nvidia-h200", "illustrative-1t-moe", 1163),
])
def test_decode_bound_full_peak(full_client, hardware, model, expected):
    body = decode(full_client, hardware, model)
    assert round(body["outputs"]["tokens_per_s_per_user"]) == expected
    assert body["evidence"] == "derived"
    assert body["inputs"]["bandwidth"]["evidence"] == "vendor_spec"
    assert body["inputs"]["active_params"]["evidence"] == "assumption"
    assert body["basis"] == "derived: vendor_spec + assumption"


@pytest.mark.parametrize("hardware, model", [
    ("nvidia-h100-sxm", "illustrative-100b"), ("8x-nvidia-h100-sxm", "illustrative-1t-moe")])
def test_does_not_fit(full_client, hardware, model):
    assert decode(full_client, hardware, model)["outputs"]["fits"] is False


@pytest.mark.parametrize("hardware, model, expected", [
    ("8x-nvidia-h100-sxm", "illustrative-100b", 132),
    ("nvidia-gb200-nvl72", "illustrative-100b", 2842),
    ("nvidia-gb200-nvl72", "illustrative-1t-moe", 8721),
])
def test_decode_bound_half_peak(full_client, hardware, model, expected):
    body = decode(full_client, hardware, model, efficiency=0.5)
    assert round(body["outputs"]["tokens_per_s_per_user"]) == expected


def test_batch_tradeoff_at_azure_prices(full_client):
    rows = full_client.get("/v1/calc/batch", params={
        "hardware": "8x-nvidia-h100-sxm", "model": "illustrative-100b", "batch": [1, 32],
        "sku": "Standard_ND96isr_H100_v5"}).json()
    by = {r["batch"]: r for r in rows["outputs"]["rows"]}
    assert round(by[1]["cost_per_million_tokens"], 2) == 206.55
    assert round(by[32]["cost_per_million_tokens"], 1) == 9.1
    assert round(by[1]["tokens_per_s_per_user"]) == 132 and round(by[32]["tokens_per_s_per_user"]) == 94
    assert rows["inputs"]["price_per_hour"]["evidence"] == "list_price"
    assert rows["basis"] == "derived: list_price + vendor_spec + assumption"
    h200 = full_client.get("/v1/calc/batch", params={
        "hardware": "8x-nvidia-h200", "model": "illustrative-10b", "batch": [1, 32],
        "sku": "Standard_ND96isr_H200_v5"}).json()["outputs"]["rows"]
    assert [round(r["cost_per_million_tokens"], 2) for r in h200] == [13.09, 1.21]
    one_b = full_client.get("/v1/calc/batch", params={
        "hardware": "8x-nvidia-h100-sxm", "model": "illustrative-1b", "batch": 1,
        "price_per_hour": 98.32}).json()["outputs"]["rows"][0]
    assert round(one_b["cost_per_million_tokens"], 2) == 2.31


def test_a_vm_of_another_accelerator_count_is_priced_per_accelerator(full_client):
    """One H100 priced with the 8-GPU ND96isr H100 v5: an eighth of the VM's price, said in
    the price's note, so the cost per million tokens is the 8-GPU system's, not 8x it."""
    def batch(hardware):
        return full_client.get("/v1/calc/batch", params={
            "hardware": hardware, "model": "illustrative-100b", "batch": 32,
            "sku": "Standard_ND96isr_H100_v5"}).json()
    [vm] = full_client.get("/v1/prices", params={
        "sku": "Standard_ND96isr_H100_v5", "region": "eastus2", "offer": "on_demand",
        "os": "linux"}).json()["rows"]
    one, eight = batch("nvidia-h100-sxm"), batch("8x-nvidia-h100-sxm")
    assert one["inputs"]["price_per_hour"]["value"] == pytest.approx(vm["hourly_price"] / 8)
    assert "for its 8 accelerators, x 1/8 for the 1 of nvidia-h100-sxm" in \
        one["inputs"]["price_per_hour"]["note"]
    assert eight["inputs"]["price_per_hour"]["value"] == vm["hourly_price"]
    [row] = one["outputs"]["rows"]
    assert row["cost_per_million_tokens"] == pytest.approx(
        vm["hourly_price"] / 8 / (row["tokens_per_s_aggregate"] * 3600) * 1e6)
    assert row["cost_per_million_tokens"] == pytest.approx(
        eight["outputs"]["rows"][0]["cost_per_million_tokens"])


def test_a_vm_renting_another_accelerator_prices_nothing(full_client):
    """An MI300X (or a GB200 rack) priced with the H100 VM was a cost from another GPU's
    price; such a VM is a 422 naming sku. The VM's name and region match case aside, as
    /v1/prices matches them."""
    for hardware in ("amd-mi300x", "nvidia-gb200-nvl72"):
        r = full_client.get("/v1/calc/batch", params={
            "hardware": hardware, "model": "illustrative-100b", "batch": 1,
            "sku": "Standard_ND96isr_H100_v5"})
        assert r.status_code == 422 and r.json()["error"]["param"] == "sku"
        assert "rents nvidia-h100-sxm, not " in r.json()["error"]["message"]
    lower = full_client.get("/v1/calc/batch", params={
        "hardware": "8x-nvidia-h100-sxm", "model": "illustrative-100b", "batch": 32,
        "sku": "standard_nd96isr_h100_v5", "region": "EastUS2"}).json()
    assert lower["inputs"]["price_per_hour"]["note"].startswith(
        "Standard_ND96isr_H100_v5, EastUS2")


def test_prefill(full_client):
    def ms(model):
        return full_client.get("/v1/calc/prefill", params={
            "hardware": "8x-nvidia-h100-sxm", "model": model, "prompt_tokens": 8192,
            "mfu": 0.4}).json()["outputs"]["ttft_ms"]
    assert round(ms("illustrative-1t-moe")) == 83
    assert round(ms("illustrative-1t-dense")) == 2587


@pytest.mark.parametrize("rack, chips, flops", [("nvidia-gb200-nvl72", 72, 3.6e17)])
def test_prefill_on_a_rack_with_its_own_figure(full_client, rack, chips, flops):
    """A rack's own dense FP8 figure (hardware.yaml) is the whole rack's: per chip it is
    divided by the rack's accelerators, and the rack's chips share the prompt, so the TTFT is
    2 x active params x prompt tokens / (the rack's FLOP/s x MFU)."""
    out = full_client.get("/v1/calc/prefill", params={
        "hardware": rack, "model": "illustrative-1t-moe", "prompt_tokens": 8192,
        "mfu": 0.5}).json()
    assert out["inputs"]["chips"]["value"] == chips
    assert out["inputs"]["dense_flops_per_chip"]["value"] == pytest.approx(flops / chips)
    assert out["outputs"]["ttft_seconds"] == pytest.approx(2 * 32e9 * 8192 / (flops * 0.5))


def test_a_rack_whose_figure_does_not_say_dense_has_no_dense_flops(full_client):
    # Groq's "315 PFLOPS of FP8 inference compute" does not say sparse or dense: it is the
    # rack's peak_ai_flops, and a calculator that needs dense FLOP/s says it has none and how
    # to supply it, rather than taking 315 PFLOPS for dense
    for calculator, params in (("prefill", {"model": "illustrative-1t-moe", "mfu": 0.5,
                                            "prompt_tokens": 8192}), ("ridge", {})):
        r = full_client.get(f"/v1/calc/{calculator}", params={"hardware": "groq-lpx-rack",
                                                               **params})
        assert r.status_code == 422, r.text
        assert "dense_flops" in r.json()["error"]["message"]
        assert "unknown for this entry" in r.json()["error"]["message"]
    out = full_client.get("/v1/calc/prefill", params={
        "hardware": "groq-lpx-rack", "model": "illustrative-1t-moe", "prompt_tokens": 8192,
        "mfu": 0.5, "dense_flops": 1e15}).json()
    assert out["inputs"]["chips"]["value"] == 256
    assert out["outputs"]["ttft_seconds"] == pytest.approx(2 * 32e9 * 8192 / (1e15 * 256 * 0.5))


def test_ridge_points(full_client):
    def ridge(h):
        return full_client.get("/v1/calc/ridge", params={"hardware": h}).json()["outputs"]["flops_per_byte"]
    assert round(ridge("nvidia-h100-sxm")) == 591
    assert round(ridge("nvidia-gb200")) == 625


def test_speculative_tp_kv_capacity_bandwidth(full_client):
    get = lambda path, **p: full_client.get(f"/v1/calc/{path}", params=p).json()["outputs"]  # noqa: E731
    assert round(get("speculative", alpha=0.8, gamma=4, c=0.05)["speedup"], 1) == 2.8
    assert get("speculative", alpha=0.6, c=0.05)["gamma"] == 4
    tp = {r["tp"]: r["tokens_per_s"] for r in get("tensor-parallel", tp=[8, 72])["rows"]}
    assert round(tp[8], -1) == 330 and round(tp[72], -1) == 950
    kv = get("kv-transfer", model="illustrative-100b")
    assert round(kv["rows"][0]["kv_bytes"] / 1e9, 3) == 1.342
    assert get("capacity", params=405e9, precision="bf16", hardware="cerebras-wse-3")["units"] == 19
    assert get("capacity", model="illustrative-1t-dense", hardware="groq-lpx-rack")["units"] == 8
    assert get("capacity", model="illustrative-1t-dense", precision="fp4",
               hardware="groq-lpx-rack")["units"] == 4
    assert get("bandwidth-needed", active_params=32e9, tpot_ms=10)["peak_bandwidth"] == pytest.approx(6.4e12)


def test_sn40l_without_speculation(full_client):
    body = full_client.get("/v1/calc/decode-bound", params={
        "bandwidth": 16 * 1.8e12, "active_params": 405e9, "precision": "bf16",
        "context": 0}).json()
    assert round(body["outputs"]["tokens_per_s_per_user"]) == 36
    assert body["inputs"]["bandwidth"]["origin"] == "caller"


def test_grid_is_the_article_table(full_client):
    body = full_client.get("/v1/calc/grid").json()
    cells = {(r["hardware"], r["model"]): r for r in body["rows"]}
    assert round(cells[("nvidia-gb200-nvl72", "illustrative-1t-moe")]["tokens_per_s_per_user"]) == 17442
    assert cells[("nvidia-h100-sxm", "illustrative-100b")]["fits"] is False
    as_csv = full_client.get("/v1/calc/grid?format=csv")
    parsed = list(csv.DictReader(io.StringIO(as_csv.text)))
    assert len(parsed) == len(body["rows"]) and parsed[0]["hardware"] == body["rows"][0]["hardware"]


@pytest.mark.parametrize("path, param", [
    ("speculative?alpha=1", "alpha"), ("speculative?alpha=-0.1", "alpha"),
    ("decode-bound?bandwidth=0&active_params=1e9&context=0", "bandwidth"),
    ("decode-bound?hardware=nope&model=illustrative-1b", "hardware"),
    ("decode-bound?hardware=nvidia-h100-sxm&model=deepseek-r1", "model"),
    ("prefill?hardware=nvidia-h100-sxm&model=illustrative-1b&mfu=2", "mfu"),
])
def test_invalid_inputs_name_the_parameter(full_client, path, param):
    r = full_client.get(f"/v1/calc/{path}")
    assert r.status_code == 422, r.text
    err = r.json()["error"]
    assert err["param"] == param and err["message"]


def test_an_input_left_out_is_the_default_and_one_sent_the_callers(full_client):
    """Every default was labelled origin caller (tensor-parallel's 1e11 weight bytes, decode's
    8192 context), and an efficiency sent equal to the default was labelled default."""
    tp = full_client.get("/v1/calc/tensor-parallel").json()["inputs"]
    assert {k: v["origin"] for k, v in tp.items()} == dict.fromkeys(
        ("weight_bytes", "bandwidth_per_gpu", "efficiency", "layers", "allreduce_latency"),
        "default")
    assert tp["allreduce_latency"]["note"] == "the default; allreduce_us= sets it"
    base = {"hardware": "8x-nvidia-h100-sxm", "model": "illustrative-100b"}
    left = full_client.get("/v1/calc/decode-bound", params=base).json()["inputs"]
    sent = full_client.get("/v1/calc/decode-bound", params={**base, "efficiency": 1,
                                                            "context": 8192}).json()["inputs"]
    assert (left["efficiency"]["origin"], left["context"]["origin"]) == ("default", "default")
    assert (sent["efficiency"]["origin"], sent["context"]["origin"]) == ("caller", "caller")
    assert left["bandwidth"]["origin"] == sent["bandwidth"]["origin"] == "warehouse"
    needed = full_client.get("/v1/calc/bandwidth-needed", params={"active_params": 32e9}
                             ).json()["inputs"]  # its input tpot is set by tpot_ms
    assert (needed["tpot"]["origin"], needed["tpot"]["note"]) == (
        "default", "the default; tpot_ms= sets it")


def test_capacity_names_what_is_missing(full_client):
    """Without a model the 422 named hardware; a GPU asked for its default metric (SRAM) was
    told its params were unknown, not that memory_capacity would answer."""
    no_model = full_client.get("/v1/calc/capacity", params={"hardware": "cerebras-wse-3"})
    assert no_model.status_code == 422 and no_model.json()["error"]["param"] == "model"
    gpu = full_client.get("/v1/calc/capacity", params={"model": "illustrative-100b",
                                                       "hardware": "nvidia-h100-sxm"})
    assert gpu.status_code == 422 and gpu.json()["error"]["param"] == "metric"
    assert "metric=memory_capacity" in gpu.json()["error"]["message"]
    ok = full_client.get("/v1/calc/capacity", params={"model": "illustrative-100b",
                                                      "hardware": "nvidia-h100-sxm",
                                                      "metric": "memory_capacity"})
    assert ok.status_code == 200, ok.text


def test_block_scaled_fp4_weights_count_their_scales(full_client):
    """NVFP4 stores 4-bit values with one 8-bit E4M3 scale per 16 (4.5 bits, 0.5625 B) and
    MXFP4 one 8-bit E8M0 scale per 32 (4.25 bits, 0.53125 B): at a bare 0.5 B the decode bound
    of 8x H100 on 100B was 536.0 tokens/s (476.4 is right) and 1T dense fit 12 WSE-3 (13)."""
    bandwidth = 8 * 3.35e12  # data/hardware.yaml: H100 SXM, 3.35 TB/s each
    body = decode(full_client, "8x-nvidia-h100-sxm", "illustrative-100b", context=0,
                  precision="nvfp4")
    weight = body["inputs"]["bytes_per_weight"]
    assert weight["value"] == (4 + 8 / 16) / 8 == 0.5625
    assert weight["note"] == "nvfp4 weights: 4-bit values + one E4M3 scale per 16 = 4.5 bits"
    per_user = body["outputs"]["tokens_per_s_per_user"]
    assert per_user == pytest.approx(bandwidth / (100e9 * 0.5625)) and round(per_user, 1) == 476.4
    r = full_client.get("/v1/calc/capacity", params={
        "hardware": "cerebras-wse-3", "model": "illustrative-1t-dense", "precision": "mxfp4"})
    assert r.status_code == 200, r.text
    cap = r.json()
    assert cap["inputs"]["bytes_per_weight"]["value"] == (4 + 8 / 32) / 8 == 0.53125
    assert "one E8M0 scale per 32" in cap["inputs"]["bytes_per_weight"]["note"]
    assert cap["outputs"]["weight_bytes"] == pytest.approx(531.25e9)  # 1e12 x 0.53125 B
    assert cap["outputs"]["units"] == 13  # 531.25 GB / 44 GB of SRAM = 12.07 wafers
    plain = decode(full_client, "8x-nvidia-h100-sxm", "illustrative-100b", context=0,
                   precision="fp8")  # a precision without block scales keeps its plain note
    assert plain["inputs"]["bytes_per_weight"]["note"] == "fp8 weights"
