"""The seed article's bounds, as plain functions. Units: bytes, bytes/s, FLOP/s, seconds.

Every function is pure arithmetic on numbers; ``warehouse.figures.calc_inputs`` looks the numbers up
in the warehouse (hardware specs, model shapes, prices) and labels each input's evidence.
"""

from __future__ import annotations

import math

# Bytes a value takes in memory, its block scales included. NVFP4 stores 4-bit E2M1 values with
# one FP8 (E4M3) scale per 16-value micro-block, and one FP32 scale per tensor (negligible):
# 4 + 8/16 = 4.5 bits (NVIDIA, "Introducing NVFP4 for Efficient and Accurate Low-Precision
# Inference", developer.nvidia.com/blog/introducing-nvfp4-for-efficient-and-accurate-low-
# precision-inference/, 2025-06-24). MXFP4 shares one 8-bit E8M0 scale among 32 E2M1 values:
# 4 + 8/32 = 4.25 bits (OCP Microscaling Formats (MX) Specification v1.0, 2023, its MXFP4 row:
# block size 32, scale E8M0). fp4 and int4 count the bare 4 bits (no scales said).
BYTES_PER_VALUE = {"fp32": 4.0, "fp16": 2.0, "bf16": 2.0, "fp8": 1.0, "int8": 1.0,
                   "fp4": 0.5, "nvfp4": (4 + 8 / 16) / 8, "mxfp4": (4 + 8 / 32) / 8, "int4": 0.5}
# What a precision's bytes hold beyond its values, said in the note of the input that uses them.
BLOCK_SCALES = {"nvfp4": "4-bit values + one E4M3 scale per 16 = 4.5 bits",
                "mxfp4": "4-bit values + one E8M0 scale per 32 = 4.25 bits"}


def kv_bytes_per_token(layers: int, kv_heads: int, head_dim: int,
                       bytes_per_value: float = 1.0) -> float:
    """KV cache bytes per token = 2 (K and V) × layers × KV heads × head dim × bytes per value."""
    return 2.0 * layers * kv_heads * head_dim * bytes_per_value


def decode_bound(*, bandwidth: float, active_params: float, bytes_per_weight: float,
                 kv_per_token: float, context: int, batch: int = 1, efficiency: float = 1.0,
                 params: float | None = None, memory: float | None = None) -> dict:
    """Upper bound on decode speed when every step reads the active weights once and each
    user's KV cache once.

    bytes per step = active params × bytes per weight + KV bytes per token × context × batch
    tokens/s per user = bandwidth × efficiency ÷ bytes per step; aggregate = per user × batch.
    fits = total params × bytes per weight + KV bytes per token × context × batch ≤ memory.
    """
    kv = kv_per_token * context * batch
    step_bytes = active_params * bytes_per_weight + kv
    per_user = bandwidth * efficiency / step_bytes
    resident = (params if params is not None else active_params) * bytes_per_weight + kv
    return {"bytes_per_step": step_bytes, "kv_bytes": kv, "tokens_per_s_per_user": per_user,
            "tokens_per_s_aggregate": per_user * batch, "resident_bytes": resident,
            "fits": None if memory is None else resident <= memory}


# Cost per million tokens, the one formula: USD per hour ÷ (tokens/s × 3600) × 1,000,000.
# The views and the frontier write it with ``cost_per_million_sql``; a rate per accelerator-hour
# is charged for every accelerator the configuration occupies (``accelerators``).
COST_PER_MILLION = "{rate} * {accelerators} / (({tokens_per_s}) * 3600.0) * 1e6"


def cost_per_million_sql(rate: str, tokens_per_s: str, accelerators: str = "1") -> str:
    """The formula as SQL over three SQL expressions (a rate per accelerator-hour, the tokens/s
    of the whole configuration or of one accelerator, and the accelerators it is divided by)."""
    return COST_PER_MILLION.format(rate=rate, tokens_per_s=tokens_per_s,
                                   accelerators=accelerators)


def cost_per_million_tokens(price_per_hour: float, tokens_per_s: float) -> float:
    """USD per million tokens = price per hour ÷ (tokens/s × 3600) × 1,000,000
    (``COST_PER_MILLION`` with one accelerator)."""
    return price_per_hour * 1 / (tokens_per_s * 3600.0) * 1e6


def prefill_ttft(*, active_params: float, prompt_tokens: int, dense_flops: float, mfu: float,
                 chips: int = 1) -> float:
    """Lower bound on TTFT (seconds) = 2 × active params × prompt tokens ÷ (dense FLOP/s × MFU ×
    chips). Attention's quadratic term is left out, so this is a lower bound."""
    return 2.0 * active_params * prompt_tokens / (dense_flops * mfu * chips)


def ridge_point(dense_flops: float, bandwidth: float) -> float:
    """Roofline ridge point (FLOPs per byte) = dense FLOP/s ÷ memory bandwidth."""
    return dense_flops / bandwidth


def speculative(alpha: float, gamma: int, c: float) -> dict:
    """Leviathan et al.: expected tokens per big-model step E = (1 − α^(γ+1)) ÷ (1 − α) and
    wall-time speedup = E ÷ (γ·c + 1), for acceptance rate α < 1, γ drafted tokens and a draft
    costing c times the big model per token."""
    expected = (1.0 - alpha ** (gamma + 1)) / (1.0 - alpha)
    return {"expected_tokens_per_step": expected, "speedup": expected / (gamma * c + 1.0)}


def best_gamma(alpha: float, c: float, max_gamma: int = 32) -> dict:
    """The γ in 1..max_gamma with the largest speedup for α and c."""
    best = max(range(1, max_gamma + 1), key=lambda g: speculative(alpha, g, c)["speedup"])
    return {"gamma": best, **speculative(alpha, best, c)}


def tensor_parallel(*, weight_bytes: float, tp: int, bandwidth_per_gpu: float, efficiency: float,
                    layers: int, allreduce_latency: float) -> dict:
    """Time per token = weight bytes ÷ (TP × per-GPU bandwidth × efficiency)
    + layers × 2 × all-reduce latency (two all-reduces per layer, Megatron-LM)."""
    memory_time = weight_bytes / (tp * bandwidth_per_gpu * efficiency)
    comm_time = layers * 2 * allreduce_latency
    total = memory_time + comm_time
    return {"memory_seconds": memory_time, "communication_seconds": comm_time,
            "seconds_per_token": total, "tokens_per_s": 1.0 / total}


def kv_transfer(*, kv_per_token: float, prompt_tokens: int, link_bandwidth: float) -> dict:
    """Disaggregated serving: KV bytes for a prompt = KV bytes per token × prompt tokens, and
    the time to move them = bytes ÷ link bandwidth."""
    size = kv_per_token * prompt_tokens
    return {"kv_bytes": size, "transfer_seconds": size / link_bandwidth}


def bandwidth_needed(*, active_params: float, bytes_per_weight: float, tpot: float,
                     efficiency: float = 0.5) -> dict:
    """Bandwidth to read the active weights once per TPOT: effective = bytes ÷ TPOT, and the
    peak that gives it at an efficiency: effective ÷ efficiency (KV cache not included)."""
    effective = active_params * bytes_per_weight / tpot
    return {"effective_bandwidth": effective, "peak_bandwidth": effective / efficiency}


def capacity_units(*, params: float, bytes_per_weight: float, capacity_per_unit: float) -> dict:
    """Units (chips, wafers, racks) needed to hold every weight: ceil(params × bytes ÷ capacity)."""
    size = params * bytes_per_weight
    return {"weight_bytes": size, "units": math.ceil(size / capacity_per_unit - 1e-12)}
