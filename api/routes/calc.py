"""Bound calculators over HTTP: inputs by hardware/model id from the warehouse, or explicit."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response
from pydantic import Field

from api.params import Params
from api.responses import Format, list_response, mark_cacheable
from api.routes.common import reader, render_item, settings_of, snapshot
from warehouse.figures import calc_inputs as ci
from warehouse.model.public import CalcResult, GridRowPublic, ListPage

router = APIRouter(prefix="/v1/calc", tags=["calculators"])

Precision = Literal["fp32", "fp16", "bf16", "fp8", "int8", "fp4", "nvfp4", "mxfp4", "int4"]
HARDWARE = ("Hardware id from /v1/hardware, e.g. 8x-nvidia-h100-sxm, nvidia-gb200-nvl72; an "
            "unknown id is a 422 listing the known ones.")
MODEL = ("Model id from /v1/models, e.g. illustrative-100b; an unknown id is a 422 listing the "
         "known ones.")
PRECISION = "Weight (and KV) precision."
CONTEXT = "Tokens of context per user."
EFFICIENCY = "Share of peak bandwidth achieved (0.001-1)."
EXPLICIT = "Explicit value (SI units), overrides the warehouse."
EXPLICIT_INT = "Explicit value, overrides the warehouse."


def _explicit() -> float | None:
    return Field(None, ge=1e-6, le=1e21, description=EXPLICIT)


def _explicit_int() -> int | None:
    return Field(None, gt=0, description=EXPLICIT_INT)


def _id(description: str) -> str | None:
    return Field(None, min_length=1, description=description)


# Repeatable sizes, each checked (``Params`` splits ``a=x,y`` before they are read).
Sizes = list[Annotated[int, Field(ge=1, le=100_000)]] | None


def _run(request: Request, q: Params, fn, **kw) -> Response:
    with snapshot(request) as (opened, con):
        payload = ci.arith(fn, con, **kw)
    return render_item(request, opened, _labelled(payload, q), memo=True)


# Inputs named otherwise than the parameter that sets them (its unit converted).
SENT_AS = {"allreduce_latency": "allreduce_us", "tpot": "tpot_ms"}


def _labelled(payload: dict, q: Params) -> dict:
    """Each input that is a parameter of the route labelled by whether the request sent it:
    the caller's when sent, the route's documented default when left out (the calculators
    see a value either way, so they cannot tell)."""
    for name, used in payload.get("inputs", {}).items():
        param = SENT_AS.get(name, name)
        if param in type(q).model_fields and used["origin"] in ("caller", "default"):
            sent = param in q.model_fields_set
            used["origin"] = "caller" if sent else "default"
            if not sent and not used.get("note"):
                used["note"] = f"the default; {param}= sets it"
    return payload


class DecodeParams(Params):
    hardware: str | None = _id(HARDWARE)
    model: str | None = _id(MODEL)
    precision: Precision = Field("fp8", description=PRECISION)
    context: int = Field(8192, ge=0, le=10_000_000, description=CONTEXT)
    batch: int = Field(1, ge=1, le=100_000, description="Users per step.")
    efficiency: float = Field(1.0, ge=0.001, le=1, description=EFFICIENCY)
    bandwidth: float | None = _explicit()
    memory: float | None = _explicit()
    params: float | None = _explicit()
    active_params: float | None = _explicit()
    layers: int | None = _explicit_int()
    kv_heads: int | None = _explicit_int()
    head_dim: int | None = _explicit_int()


@router.get("/decode-bound", response_model=CalcResult,
            summary="Decode speed bound per user: bandwidth ÷ bytes per token")
def decode_bound(request: Request, q: Annotated[DecodeParams, Query()]) -> Response:
    """tokens/s per user = bandwidth × efficiency ÷ (active params × bytes + KV/token × context
    × batch); plus whether weights + KV fit in memory.

    Inputs needed together: the bandwidth (``hardware`` or ``bandwidth``) and the model's
    active parameters, layers, KV heads and head dim (``model`` or the explicit values); one
    that neither gives is a 422 naming it."""
    return _run(request, q, ci.decode, hardware_id=q.hardware, model_id=q.model,
                precision=q.precision, context=q.context, batch=q.batch,
                efficiency=q.efficiency, bandwidth=q.bandwidth, memory=q.memory, params=q.params,
                active_params=q.active_params, layers=q.layers, kv_heads=q.kv_heads,
                head_dim=q.head_dim)


class BatchParams(Params):
    hardware: str | None = _id(HARDWARE)
    model: str | None = _id(MODEL)
    precision: Precision = Field("fp8", description=PRECISION)
    context: int = Field(8192, ge=0, le=10_000_000, description=CONTEXT)
    batch: Sizes = Field(None, description="Batch sizes, 1-100000 (repeatable); default 1, 8, "
                         "32.")
    efficiency: float = Field(0.5, ge=0.001, le=1, description=EFFICIENCY)
    price_per_hour: float | None = Field(None, ge=1e-6, le=1e9, description="USD per hour of "
                                         "the whole system (caller's assumption).")
    sku: str | None = Field(None, description="Azure VM size whose current on-demand Linux list "
                            "price to use, e.g. Standard_ND96isr_H100_v5.")
    region: str = Field("eastus2", description="Region for sku.")


@router.get("/batch", response_model=CalcResult,
            summary="Batch trade-off: per-user speed, aggregate speed, cost per million tokens")
def batch(request: Request, q: Annotated[BatchParams, Query()]) -> Response:
    """The article's batch table: batch 1 is fastest per user and dearest per token.

    Inputs needed together: ``hardware`` (its bandwidth) and ``model`` (active parameters,
    layers, KV heads, head dim); the cost column needs ``price_per_hour`` or ``sku`` (priced
    in ``region``). A missing one is a 422 naming it."""
    return _run(request, q, ci.batch_tradeoff, hardware_id=q.hardware, model_id=q.model,
                precision=q.precision, context=q.context, batches=q.batch or [1, 8, 32],
                efficiency=q.efficiency, price_per_hour=q.price_per_hour, sku=q.sku,
                region=q.region)


class PrefillParams(Params):
    hardware: str | None = _id(HARDWARE)
    model: str | None = _id(MODEL)
    prompt_tokens: int = Field(8192, ge=1, le=10_000_000, description="Prompt tokens.")
    mfu: float = Field(0.4, ge=0.001, le=1, description="Model FLOP utilisation (0.001-1).")
    chips: int | None = Field(None, ge=1, description="Chips sharing the prompt (default: the "
                              "system's accelerators).")
    dense_flops: float | None = _explicit()
    active_params: float | None = _explicit()


@router.get("/prefill", response_model=CalcResult,
            summary="TTFT lower bound: 2 × active params × prompt ÷ (FLOP/s × MFU × chips)")
def prefill(request: Request, q: Annotated[PrefillParams, Query()]) -> Response:
    """Attention's quadratic term is left out, so real TTFT is higher.

    Inputs needed together: dense FLOP/s per chip (``hardware`` or ``dense_flops``) and
    active parameters (``model`` or ``active_params``); one that neither gives is a 422 naming
    it."""
    return _run(request, q, ci.prefill, hardware_id=q.hardware, model_id=q.model,
                prompt_tokens=q.prompt_tokens, mfu=q.mfu, chips=q.chips,
                dense_flops=q.dense_flops, active_params=q.active_params)


class RidgeParams(Params):
    hardware: str = Field(min_length=1, description=HARDWARE)


@router.get("/ridge", response_model=CalcResult,
            summary="Roofline ridge point: dense FLOP/s ÷ bandwidth")
def ridge(request: Request, q: Annotated[RidgeParams, Query()]) -> Response:
    """FLOPs per byte a kernel needs to be compute-bound on this hardware. A hardware entry
    without dense FLOP/s or bandwidth is a 422 naming the missing figure."""
    return _run(request, q, ci.ridge, hardware_id=q.hardware)


def _pure(request: Request, q: Params, payload: dict) -> Response:
    """A calculation from the caller's numbers alone (no warehouse input)."""
    return render_item(request, reader(request).get(), _labelled(payload, q), memo=True)


class SpeculativeParams(Params):
    alpha: float = Field(ge=0, lt=1, description="Acceptance rate, 0 ≤ α < 1.")
    c: float = Field(0.05, ge=0, le=10, description="Draft cost per token relative to the big "
                     "model.")
    gamma: int | None = Field(None, ge=1, le=64, description="Drafted tokens; omit to search "
                              "the best γ.")
    max_gamma: int = Field(32, ge=1, le=64, description="Search limit.")


@router.get("/speculative", response_model=CalcResult,
            summary="Speculative decoding speedup (Leviathan et al.)")
def speculative(request: Request, q: Annotated[SpeculativeParams, Query()]) -> Response:
    """E = (1 − α^(γ+1)) / (1 − α); speedup = E / (γc + 1); best γ when γ is omitted."""
    return _pure(request, q, ci.speculative(alpha=q.alpha, c=q.c, gamma=q.gamma,
                                         max_gamma=q.max_gamma))


class TensorParallelParams(Params):
    weight_bytes: float = Field(100e9, ge=1, le=1e18, description="Bytes of weights read per "
                                "token.")
    tp: Sizes = Field(None, description="TP degrees, 1-100000 (repeatable); default 8, 16, 32, "
                      "72.")
    bandwidth_per_gpu: float = Field(8e12, ge=1, le=1e18, description="B/s per GPU.")
    efficiency: float = Field(0.7, ge=0.001, le=1, description=EFFICIENCY)
    layers: int = Field(80, ge=1, le=10_000, description="Layers.")
    allreduce_us: float = Field(5.0, ge=0, le=1e6, description="Latency of one small "
                                "all-reduce in µs (assumption).")


@router.get("/tensor-parallel", response_model=CalcResult,
            summary="Time per token under tensor parallelism")
def tensor_parallel(request: Request, q: Annotated[TensorParallelParams, Query()]) -> Response:
    """weight bytes ÷ (TP × bandwidth × efficiency) + layers × 2 × all-reduce latency."""
    return _pure(request, q, ci.tensor_parallel(
        weight_bytes=q.weight_bytes, degrees=q.tp or [8, 16, 32, 72], bandwidth_per_gpu=q.bandwidth_per_gpu,
        efficiency=q.efficiency, layers=q.layers, allreduce_us=q.allreduce_us))


class KvTransferParams(Params):
    model: str | None = _id(MODEL)
    prompt_tokens: int = Field(8192, ge=1, le=10_000_000, description="Prompt tokens.")
    precision: Precision = Field("fp8", description=PRECISION)
    link_bandwidth: list[Annotated[float, Field(gt=0, lt=1e20)]] | None = Field(
        None, description="Link B/s (> 0, repeatable); default 1.8e12 (NVLink) and 50e9 "
        "(400 Gb/s).")
    layers: int | None = _explicit_int()
    kv_heads: int | None = _explicit_int()
    head_dim: int | None = _explicit_int()


@router.get("/kv-transfer", response_model=CalcResult,
            summary="KV cache size of a prompt and its transfer time")
def kv_transfer(request: Request, q: Annotated[KvTransferParams, Query()]) -> Response:
    """KV bytes = 2 × layers × KV heads × head dim × bytes × tokens; time = bytes ÷ link.

    Inputs needed together: layers, KV heads and head dim (``model`` or the explicit values);
    one that neither gives is a 422 naming it."""
    return _run(request, q, ci.kv_transfer, model_id=q.model, prompt_tokens=q.prompt_tokens,
                precision=q.precision, links=q.link_bandwidth or [1.8e12, 50e9], layers=q.layers, kv_heads=q.kv_heads,
                head_dim=q.head_dim)


class CapacityParams(Params):
    model: str | None = _id(MODEL)
    params: float | None = _explicit()
    precision: Precision = Field("fp8", description=PRECISION)
    hardware: str | None = _id(HARDWARE)
    metric: Literal["memory_capacity", "sram_capacity"] = Field(
        "sram_capacity", description="Which capacity of the hardware to fill.")
    capacity_per_unit: float | None = _explicit()


@router.get("/capacity", response_model=CalcResult,
            summary="Units (chips, wafers, racks) needed to hold a model's weights")
def capacity(request: Request, q: Annotated[CapacityParams, Query()]) -> Response:
    """ceil(params × bytes per weight ÷ capacity per unit).

    Inputs needed together: parameters (``model`` or ``params``) and the capacity per unit
    (``hardware``'s ``metric`` or ``capacity_per_unit``); one that neither gives is a 422
    naming it."""
    return _run(request, q, ci.capacity, model_id=q.model, params=q.params, precision=q.precision,
                hardware_id=q.hardware, metric=q.metric, capacity_per_unit=q.capacity_per_unit)


class BandwidthParams(Params):
    model: str | None = _id(MODEL)
    active_params: float | None = _explicit()
    precision: Precision = Field("fp8", description=PRECISION)
    tpot_ms: float = Field(10.0, ge=0.001, le=1e6, description="TPOT target in ms.")
    efficiency: float = Field(0.5, ge=0.001, le=1, description=EFFICIENCY)


@router.get("/bandwidth-needed", response_model=CalcResult,
            summary="Bandwidth needed to meet a TPOT target")
def bandwidth_needed(request: Request, q: Annotated[BandwidthParams, Query()]) -> Response:
    """effective = active bytes ÷ TPOT; peak = effective ÷ efficiency (weights only).

    Needs the active parameters (``model`` or ``active_params``); without either, a 422
    naming it."""
    return _run(request, q, ci.bandwidth_needed, model_id=q.model, active_params=q.active_params,
                precision=q.precision, tpot_ms=q.tpot_ms, efficiency=q.efficiency)


class GridParams(Params):
    precision: Precision = Field("fp8", description=PRECISION)
    context: int = Field(8192, ge=0, le=10_000_000, description=CONTEXT)
    efficiency: float = Field(1.0, ge=0.001, le=1, description=EFFICIENCY)
    format: Format | None = Field(None, description="json (default) or csv.")


@router.get("/grid", summary="The article's table: every hardware × every illustrative shape",
            response_model=ListPage[GridRowPublic])
def grid(request: Request, q: Annotated[GridParams, Query()]) -> Response:
    """Decode bound per user at batch 1 for each pair, with fits/does-not-fit."""
    with snapshot(request) as (opened, con):
        key = ("grid", q.precision, q.context, q.efficiency)
        rows = opened.cache.get(key)
        if rows is None:  # a snapshot never changes: compute each grid once per snapshot
            rows = ci.grid(con, precision=q.precision, context=q.context,
                           efficiency=q.efficiency)
            if sum(1 for k in opened.cache if k[0] == "grid") < 64:  # bounded per snapshot
                opened.cache[key] = rows
    cols = list(rows[0]) if rows else ["hardware", "model"]
    mark_cacheable(request)
    return list_response(request, opened, total=len(rows), rows=rows, columns=cols,
                         limit=max(len(rows), 1), offset=0, fmt=q.format,
                         max_age=settings_of(request).api_cache_max_age)
