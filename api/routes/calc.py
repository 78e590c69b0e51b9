"""Bound calculators over HTTP: inputs by hardware/model id from the warehouse, or explicit."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response

from api.responses import Format, list_response, mark_cacheable
from api.routes.common import reader, render_item, settings_of, snapshot
from warehouse import calc_inputs as ci
from warehouse.exceptions import QueryError
from warehouse.public import CalcResult, GridRowPublic, ListPage

router = APIRouter(prefix="/v1/calc", tags=["calculators"])

Precision = Literal["fp32", "fp16", "bf16", "fp8", "int8", "fp4", "nvfp4", "mxfp4", "int4"]
HardwareId = Annotated[str | None, Query(description="Hardware id from /v1/hardware, e.g. "
                                         "8x-nvidia-h100-sxm, nvidia-gb200-nvl72.")]
ModelId = Annotated[str | None, Query(description="Model id from /v1/models, e.g. illustrative-100b.")]
Prec = Annotated[Precision, Query(description="Weight (and KV) precision.")]
Context = Annotated[int, Query(ge=0, le=10_000_000, description="Tokens of context per user.")]
Eff = Annotated[float, Query(ge=0.001, le=1, description="Share of peak bandwidth achieved "
                             "(0.001-1).")]
Pos = Annotated[float | None, Query(ge=1e-6, le=1e21, description="Explicit value (SI units), "
                                   "overrides the warehouse.")]
PosInt = Annotated[int | None, Query(gt=0, description="Explicit value, overrides the warehouse.")]


def _run(request: Request, fn, **kw) -> Response:
    with snapshot(request) as (opened, con):
        payload = ci.arith(fn, con, **kw)
    return render_item(request, opened, payload, memo=True)


@router.get("/decode-bound", response_model=CalcResult,
            summary="Decode speed bound per user: bandwidth ÷ bytes per token")
def decode_bound(request: Request, hardware: HardwareId = None, model: ModelId = None,
                 precision: Prec = "fp8", context: Context = 8192,
                 batch: Annotated[int, Query(ge=1, le=100_000, description="Users per step.")] = 1,
                 efficiency: Eff = 1.0, bandwidth: Pos = None, memory: Pos = None,
                 params: Pos = None, active_params: Pos = None, layers: PosInt = None,
                 kv_heads: PosInt = None, head_dim: PosInt = None) -> Response:
    """tokens/s per user = bandwidth × efficiency ÷ (active params × bytes + KV/token × context
    × batch); plus whether weights + KV fit in memory."""
    return _run(request, ci.decode, hardware_id=hardware, model_id=model, precision=precision,
                context=context, batch=batch, efficiency=efficiency, bandwidth=bandwidth,
                memory=memory, params=params, active_params=active_params, layers=layers,
                kv_heads=kv_heads, head_dim=head_dim)


@router.get("/batch", response_model=CalcResult,
            summary="Batch trade-off: per-user speed, aggregate speed, cost per million tokens")
def batch(request: Request, hardware: HardwareId = None, model: ModelId = None,
          precision: Prec = "fp8", context: Context = 8192,
          batches: Annotated[list[int] | None, Query(alias="batch", description="Batch sizes "
                             "(repeatable); default 1, 8, 32.")] = None,
          efficiency: Eff = 0.5,
          price_per_hour: Annotated[float | None, Query(ge=1e-6, le=1e9, description="USD per hour of the "
                                    "whole system (caller's assumption).")] = None,
          sku: Annotated[str | None, Query(description="Azure VM size whose current on-demand "
                         "Linux list price to use, e.g. Standard_ND96isr_H100_v5.")] = None,
          region: Annotated[str, Query(description="Region for sku.")] = "eastus2") -> Response:
    """The article's batch table: batch 1 is fastest per user and dearest per token."""
    sizes = batches or [1, 8, 32]
    if any(b < 1 or b > 100_000 for b in sizes):
        raise QueryError("batch: each batch size must be between 1 and 100000", param="batch")
    return _run(request, ci.batch_tradeoff, hardware_id=hardware, model_id=model,
                precision=precision, context=context, batches=sizes, efficiency=efficiency,
                price_per_hour=price_per_hour, sku=sku, region=region)


@router.get("/prefill", response_model=CalcResult,
            summary="TTFT lower bound: 2 × active params × prompt ÷ (FLOP/s × MFU × chips)")
def prefill(request: Request, hardware: HardwareId = None, model: ModelId = None,
            prompt_tokens: Annotated[int, Query(ge=1, le=10_000_000, description="Prompt tokens.")] = 8192,
            mfu: Annotated[float, Query(ge=0.001, le=1, description="Model FLOP utilisation (0.001-1).")] = 0.4,
            chips: Annotated[int | None, Query(ge=1, description="Chips sharing the prompt "
                             "(default: the system's accelerators).")] = None,
            dense_flops: Pos = None, active_params: Pos = None) -> Response:
    """Attention's quadratic term is left out, so real TTFT is higher."""
    return _run(request, ci.prefill, hardware_id=hardware, model_id=model,
                prompt_tokens=prompt_tokens, mfu=mfu, chips=chips, dense_flops=dense_flops,
                active_params=active_params)


@router.get("/ridge", response_model=CalcResult,
            summary="Roofline ridge point: dense FLOP/s ÷ bandwidth")
def ridge(request: Request, hardware: Annotated[str, Query(description="Hardware id.")]) -> Response:
    """FLOPs per byte a kernel needs to be compute-bound on this hardware."""
    return _run(request, ci.ridge, hardware_id=hardware)


def _pure(request: Request, payload: dict) -> Response:
    """A calculation from the caller's numbers alone (no warehouse input)."""
    return render_item(request, reader(request).get(), payload, memo=True)


@router.get("/speculative", response_model=CalcResult,
            summary="Speculative decoding speedup (Leviathan et al.)")
def speculative(request: Request,
                alpha: Annotated[float, Query(ge=0, lt=1, description="Acceptance rate, 0 ≤ α < 1.")],
                c: Annotated[float, Query(ge=0, le=10, description="Draft cost per token relative "
                             "to the big model.")] = 0.05,
                gamma: Annotated[int | None, Query(ge=1, le=64, description="Drafted tokens; "
                                 "omit to search the best γ.")] = None,
                max_gamma: Annotated[int, Query(ge=1, le=64, description="Search limit.")] = 32) -> Response:
    """E = (1 − α^(γ+1)) / (1 − α); speedup = E / (γc + 1); best γ when γ is omitted."""
    return _pure(request, ci.speculative(alpha=alpha, c=c, gamma=gamma, max_gamma=max_gamma))


@router.get("/tensor-parallel", response_model=CalcResult,
            summary="Time per token under tensor parallelism")
def tensor_parallel(request: Request,
                    weight_bytes: Annotated[float, Query(
                        ge=1, le=1e18, description="Bytes of weights read per token.")] = 100e9,
                    tp: Annotated[list[int] | None, Query(description="TP degrees (repeatable); "
                                  "default 8, 16, 32, 72.")] = None,
                    bandwidth_per_gpu: Annotated[float, Query(ge=1, le=1e18, description="B/s per GPU.")] = 8e12,
                    efficiency: Eff = 0.7,
                    layers: Annotated[int, Query(ge=1, le=10_000, description="Layers.")] = 80,
                    allreduce_us: Annotated[float, Query(ge=0, le=1e6, description="Latency of one "
                                            "small all-reduce in µs (assumption).")] = 5.0) -> Response:
    """weight bytes ÷ (TP × bandwidth × efficiency) + layers × 2 × all-reduce latency."""
    degrees = tp or [8, 16, 32, 72]
    if any(d < 1 or d > 100_000 for d in degrees):
        raise QueryError("tp: each degree must be between 1 and 100000", param="tp")
    return _pure(request, ci.tensor_parallel(
        weight_bytes=weight_bytes, degrees=degrees, bandwidth_per_gpu=bandwidth_per_gpu,
        efficiency=efficiency, layers=layers, allreduce_us=allreduce_us))


@router.get("/kv-transfer", response_model=CalcResult,
            summary="KV cache size of a prompt and its transfer time")
def kv_transfer(request: Request, model: ModelId = None,
                prompt_tokens: Annotated[int, Query(ge=1, le=10_000_000, description="Prompt tokens.")] = 8192,
                precision: Prec = "fp8",
                link_bandwidth: Annotated[list[float] | None, Query(description="Link B/s (> 0, "
                                          "(repeatable); default 1.8e12 (NVLink) and 50e9 (400 Gb/s).")] = None,
                layers: PosInt = None, kv_heads: PosInt = None, head_dim: PosInt = None) -> Response:
    """KV bytes = 2 × layers × KV heads × head dim × bytes × tokens; time = bytes ÷ link."""
    links = link_bandwidth or [1.8e12, 50e9]
    if any(not (0 < b < 1e20) for b in links):
        raise QueryError("link_bandwidth: each value must be a positive number of bytes/s",
                         param="link_bandwidth")
    return _run(request, ci.kv_transfer, model_id=model, prompt_tokens=prompt_tokens,
                precision=precision, links=links, layers=layers, kv_heads=kv_heads,
                head_dim=head_dim)


@router.get("/capacity", response_model=CalcResult,
            summary="Units (chips, wafers, racks) needed to hold a model's weights")
def capacity(request: Request, model: ModelId = None, params: Pos = None,
             precision: Prec = "fp8", hardware: HardwareId = None,
             metric: Annotated[Literal["memory_capacity", "sram_capacity"], Query(
                 description="Which capacity of the hardware to fill.")] = "sram_capacity",
             capacity_per_unit: Pos = None) -> Response:
    """ceil(params × bytes per weight ÷ capacity per unit)."""
    return _run(request, ci.capacity, model_id=model, params=params, precision=precision,
                hardware_id=hardware, metric=metric, capacity_per_unit=capacity_per_unit)


@router.get("/bandwidth-needed", response_model=CalcResult,
            summary="Bandwidth needed to meet a TPOT target")
def bandwidth_needed(request: Request, model: ModelId = None, active_params: Pos = None,
                     precision: Prec = "fp8",
                     tpot_ms: Annotated[float, Query(ge=0.001, le=1e6, description="TPOT target in ms.")] = 10.0,
                     efficiency: Eff = 0.5) -> Response:
    """effective = active bytes ÷ TPOT; peak = effective ÷ efficiency (weights only)."""
    return _run(request, ci.bandwidth_needed, model_id=model, active_params=active_params,
                precision=precision, tpot_ms=tpot_ms, efficiency=efficiency)


@router.get("/grid", summary="The article's table: every hardware × every illustrative shape",
            response_model=ListPage[GridRowPublic])
def grid(request: Request, precision: Prec = "fp8", context: Context = 8192,
         efficiency: Eff = 1.0,
         format: Annotated[Format | None, Query(description="json (default) or csv.")] = None) -> Response:
    """Decode bound per user at batch 1 for each pair, with fits/does-not-fit."""
    with snapshot(request) as (opened, con):
        key = ("grid", precision, context, efficiency)
        rows = opened.cache.get(key)
        if rows is None:  # a snapshot never changes: compute each grid once per snapshot
            rows = ci.grid(con, precision=precision, context=context, efficiency=efficiency)
            if sum(1 for k in opened.cache if k[0] == "grid") < 64:  # bounded per snapshot
                opened.cache[key] = rows
    cols = list(rows[0]) if rows else ["hardware", "model"]
    mark_cacheable(request)
    return list_response(request, opened, total=len(rows), rows=rows, columns=cols,
                         limit=max(len(rows), 1), offset=0, fmt=format,
                         max_age=settings_of(request).api_cache_max_age)
