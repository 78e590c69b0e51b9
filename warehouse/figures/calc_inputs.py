"""Inputs for the calculators, looked up in the warehouse (or taken from the caller), each
with its evidence label and source, and the results labelled ``derived`` with their basis."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass

import duckdb

from warehouse.exceptions import QueryError
from warehouse.figures import calculators as calc
from warehouse.model.vocabulary import basis
from warehouse.queries import current_price
from warehouse.storage.db import fetch_dicts, scalar

PER_UNIT_METRICS = ("memory_bandwidth", "memory_capacity", "flops_fp8_dense", "sram_capacity")


@dataclass
class Input:
    """One number a calculation used, and what kind of evidence it is."""

    value: float | None
    unit: str
    evidence: str
    origin: str  # warehouse, caller or default
    source: str | None = None  # the figure's own URL, or the source snapshot id it was read from
    note: str | None = None


def caller(value: float, unit: str) -> Input:
    """A number the caller passed in."""
    return Input(value, unit, "assumption", "caller")


def default(value: float, unit: str, note: str) -> Input:
    """A documented default assumption."""
    return Input(value, unit, "assumption", "default", note=note)


def bytes_per_value(precision: str, of: str = "") -> Input:
    """The bytes a value of ``precision`` takes (of weights, of the KV cache), as an input whose
    note says what they hold where a block format's scales add to the 4 bits (nvfp4's 0.5625 B
    would otherwise read as a mistake for 0.5)."""
    scales = calc.BLOCK_SCALES.get(precision)
    note = " ".join(filter(None, [precision, of])) + (f": {scales}" if scales else "")
    return default(calc.BYTES_PER_VALUE[precision], "B", note)


def _entry(con: duckdb.DuckDBPyConnection, table: str, param: str, key: str) -> dict:
    """The row of ``table`` (a fixed name) with id ``key``, else a QueryError on ``param``
    listing the ids there are, or saying there are none (nothing published yet, or the curated
    source did not load)."""
    rows = fetch_dicts(con, f"SELECT * FROM {table} WHERE id = ?", [key])  # noqa: S608
    if rows:
        return rows[0]
    known = [r[0] for r in con.execute(f"SELECT id FROM {table} ORDER BY id").fetchall()]  # noqa: S608
    raise QueryError(f"unknown {param} {key!r}; " + (
        f"known: {', '.join(known)}" if known else "the snapshot served has none (nothing "
        "published yet, or the curated source did not load: see /healthz)"), param=param)


def hardware(con: duckdb.DuckDBPyConnection, hardware_id: str) -> dict[str, Input]:
    """Specs of an accelerator, system or rack; a system without its own figure for a metric
    gets count × the accelerator's figure (and says so)."""
    hw = _entry(con, "hardware", "hardware", hardware_id)
    out = {s["metric"]: Input(s["value"], s["unit"], s["evidence"], "warehouse",
                              s["source_url"], s["note"])
           for s in fetch_dicts(con, "SELECT * FROM hardware_spec WHERE hardware_id = ?",
                                [hardware_id])}
    count = hw["accelerator_count"]
    if hw["accelerator_id"] and count:
        per = {s["metric"]: s for s in fetch_dicts(
            con, "SELECT * FROM hardware_spec WHERE hardware_id = ?", [hw["accelerator_id"]])}
        for metric in PER_UNIT_METRICS:
            if metric not in out and metric in per:
                s = per[metric]
                out[metric] = Input(s["value"] * count, s["unit"], s["evidence"], "warehouse",
                                    s["source_url"], f"{count} x {hw['accelerator_id']}")
    out["accelerators"] = Input(float(count or 1), "count", "vendor_spec", "warehouse")
    return out


def model(con: duckdb.DuckDBPyConnection, model_id: str) -> dict[str, Input]:
    """A model shape's numbers (empty ones stay None and make the calculation refuse)."""
    m = _entry(con, "model_shape", "model", model_id)
    units = {"params": "count", "active_params": "count", "layers": "count", "kv_heads": "count",
             "head_dim": "count"}
    return {k: Input(None if m[k] is None else float(m[k]), u, m["evidence"], "warehouse",
                     m["source_url"], m["note"]) for k, u in units.items()}


def need(inputs: Mapping[str, Input | None], *names: str, param: str) -> list[float]:
    """The values of ``names``, or a 422 naming what is missing and how to supply it."""
    missing = [n for n in names if (i := inputs.get(n)) is None or i.value is None]
    if missing:
        raise QueryError(f"{param}: {', '.join(missing)} unknown for this entry; pass "
                         f"{', '.join(missing)} explicitly", param=param)
    return [float(inputs[n].value) for n in names]  # type: ignore[union-attr, arg-type]


def result(name: str, inputs: Mapping[str, Input | None], outputs: dict) -> dict:
    """A calculator result: labelled derived, with its basis and every input's evidence."""
    used = {k: v for k, v in inputs.items() if v is not None}
    return {"calculator": name, "evidence": "derived",
            "basis": basis(*(i.evidence for i in used.values())),
            "inputs": {k: asdict(v) for k, v in used.items()}, "outputs": outputs}


def arith(fn, *args, **kw):
    """Run a calculation; inputs so extreme that the arithmetic breaks are a ``QueryError``
    (the API's 422), not a crash."""
    try:
        return fn(*args, **kw)
    except (ZeroDivisionError, OverflowError) as e:
        raise QueryError(f"these inputs are too extreme to compute ({e}); use realistic "
                         "magnitudes") from None


def pick(given: float | None, unit: str, looked_up: Input | None) -> Input | None:
    """The caller's number when given, else the warehouse's."""
    return caller(given, unit) if given is not None else looked_up


def decode(con, *, hardware_id: str | None, model_id: str | None, precision: str,
           context: int, batch: int, efficiency: float, kv_precision: str | None = None,
           bandwidth: float | None = None, memory: float | None = None,
           params: float | None = None, active_params: float | None = None,
           layers: int | None = None, kv_heads: int | None = None,
           head_dim: int | None = None) -> dict:
    """Decode bound for a hardware/model pair from the warehouse, or explicit numbers."""
    hw = hardware(con, hardware_id) if hardware_id else {}
    md = model(con, model_id) if model_id else {}
    inputs = {
        "bandwidth": pick(bandwidth, "B/s", hw.get("memory_bandwidth")),
        "memory": pick(memory, "B", hw.get("memory_capacity")),
        "params": pick(params, "count", md.get("params")),
        "active_params": pick(active_params, "count", md.get("active_params")),
        "layers": pick(layers, "count", md.get("layers")),
        "kv_heads": pick(kv_heads, "count", md.get("kv_heads")),
        "head_dim": pick(head_dim, "count", md.get("head_dim")),
        "bytes_per_weight": bytes_per_value(precision, "weights"),
        "kv_bytes_per_value": bytes_per_value(kv_precision or precision, "KV cache"),
        "context": caller(context, "tokens"), "batch": caller(batch, "users"),
        "efficiency": default(efficiency, "fraction", "share of peak bandwidth achieved")
        if efficiency == 1.0 else caller(efficiency, "fraction"),
    }
    bw, = need(inputs, "bandwidth", param="hardware")
    act, = need(inputs, "active_params", param="model")
    if context > 0:
        lay, kvh, hd = need(inputs, "layers", "kv_heads", "head_dim", param="model")
        kv = calc.kv_bytes_per_token(int(lay), int(kvh), int(hd),
                                     calc.BYTES_PER_VALUE[kv_precision or precision])
    else:
        kv = 0.0
    out = calc.decode_bound(
        bandwidth=bw, active_params=act, bytes_per_weight=calc.BYTES_PER_VALUE[precision],
        kv_per_token=kv, context=context, batch=batch, efficiency=efficiency,
        params=inputs["params"].value if inputs["params"] else None,
        memory=inputs["memory"].value if inputs["memory"] else None)
    out["kv_bytes_per_token"] = kv
    return result("decode-bound", inputs, out)


def batch_tradeoff(con, *, hardware_id: str | None, model_id: str | None, precision: str,
                   context: int, batches: list[int], efficiency: float,
                   price_per_hour: float | None, sku: str | None, region: str,
                   bandwidth: float | None = None, active_params: float | None = None,
                   layers: int | None = None, kv_heads: int | None = None,
                   head_dim: int | None = None) -> dict:
    """Per-user and aggregate tokens/s at each batch size, and cost per million tokens at a
    price per hour (the caller's, or the current Azure on-demand Linux price of ``sku``, for
    the hardware's accelerators: a VM size of another count is priced per accelerator)."""
    price_input: Input | None = None
    if price_per_hour is not None:
        price_input = caller(price_per_hour, "USD/hour")
    elif sku is not None:
        price_input = _sku_price(con, sku, region, hardware_id)
    rows_out = []
    inputs: dict[str, Input] = {}
    for b in batches:
        r = decode(con, hardware_id=hardware_id, model_id=model_id, precision=precision,
                   context=context, batch=b, efficiency=efficiency, bandwidth=bandwidth,
                   active_params=active_params, layers=layers, kv_heads=kv_heads,
                   head_dim=head_dim)
        o = r["outputs"]
        row = {"batch": b, "tokens_per_s_per_user": o["tokens_per_s_per_user"],
               "tokens_per_s_aggregate": o["tokens_per_s_aggregate"], "fits": o["fits"]}
        if price_input is not None:
            row["cost_per_million_tokens"] = calc.cost_per_million_tokens(
                float(price_input.value or 0), o["tokens_per_s_aggregate"])
        rows_out.append(row)
        inputs = {k: Input(**v) for k, v in r["inputs"].items() if k != "batch"}
    if price_input is not None:
        inputs["price_per_hour"] = price_input
    return result("batch", inputs, {"rows": rows_out})


def _sku_price(con: duckdb.DuckDBPyConnection, sku: str, region: str,
               hardware_id: str | None) -> Input:
    """The current on-demand Linux price of ``sku`` in ``region`` for the accelerators of
    ``hardware_id``: the VM's price x the hardware's accelerators / the VM's (price_catalog)
    where they differ, said in the note; the VM's own price otherwise. A VM that rents
    another accelerator than the hardware's (or none known) prices nothing: 422."""
    price = current_price(con, sku, region)
    if price is None:
        raise QueryError(f"no current on-demand Linux price for {sku} in {region}", param="sku")
    sku = price["arm_sku_name"]
    value, note, vm = price["hourly_price"], f"{sku}, {region}", int(price["accelerators"] or 0)
    has = int(hardware(con, hardware_id)["accelerators"].value or 1) if hardware_id else None
    if hardware_id:
        rents = scalar(con, "SELECT coalesce(accelerator_id, id) FROM hardware WHERE id = ?",
                       [hardware_id])
        if price["accelerator_id"] != rents:
            raise QueryError(f"{sku} rents {price['accelerator_id'] or 'no known accelerator'}, "
                             f"not {rents} (of {hardware_id}): choose a VM size that rents it "
                             f"(/v1/prices?accelerator={rents})", param="sku")
    if vm and has is not None and vm != has:
        value = value * has / vm
        note += (f": {price['hourly_price']} USD/hour for its {vm} accelerators, "
                 f"x {has}/{vm} for the {has} of {hardware_id}")
    return Input(value, "USD/hour", "list_price", "warehouse", price["source_snapshot_id"], note)


def prefill(con, *, hardware_id: str | None, model_id: str | None, prompt_tokens: int,
            mfu: float, chips: int | None, dense_flops: float | None = None,
            active_params: float | None = None) -> dict:
    """TTFT lower bound from dense FP8 FLOP/s per chip (``chips`` defaults to the system's)."""
    hw = hardware(con, hardware_id) if hardware_id else {}
    md = model(con, model_id) if model_id else {}
    per_chip = hw.get("flops_fp8_dense")
    count = int(hw["accelerators"].value or 1) if hw else 1
    if per_chip is not None and count > 1:  # a system's figure, its own or summed, is its total
        per_chip = Input(float(per_chip.value or 0) / count, per_chip.unit, per_chip.evidence,
                         per_chip.origin, per_chip.source, "per accelerator")
    inputs = {"dense_flops_per_chip": pick(dense_flops, "FLOP/s", per_chip),
              "active_params": pick(active_params, "count", md.get("active_params")),
              "prompt_tokens": caller(prompt_tokens, "tokens"),
              "mfu": caller(mfu, "fraction"),
              "chips": caller(chips, "count") if chips else Input(float(count), "count",
                                                                   "vendor_spec", "warehouse")}
    flops, = need(inputs, "dense_flops_per_chip", param="hardware")
    act, = need(inputs, "active_params", param="model")
    seconds = calc.prefill_ttft(active_params=act, prompt_tokens=prompt_tokens,
                                dense_flops=flops, mfu=mfu, chips=chips or count)
    return result("prefill", inputs, {"ttft_seconds": seconds, "ttft_ms": seconds * 1000})


def ridge(con, *, hardware_id: str) -> dict:
    """Dense FP8 FLOP/s ÷ memory bandwidth."""
    hw = hardware(con, hardware_id)
    inputs = {"dense_flops": hw.get("flops_fp8_dense"), "bandwidth": hw.get("memory_bandwidth")}
    flops, bw = need(inputs, "dense_flops", "bandwidth", param="hardware")
    return result("ridge", inputs, {"flops_per_byte": calc.ridge_point(flops, bw)})


def grid(con, *, precision: str, context: int, efficiency: float, batch: int = 1) -> list[dict]:
    """Decode bound for every hardware entry with a bandwidth × every illustrative shape."""
    hws = [r[0] for r in con.execute(
        "SELECT DISTINCT h.id FROM hardware h WHERE h.kind IN ('accelerator', 'system', 'rack') "
        "ORDER BY h.id").fetchall()]
    models = [r[0] for r in con.execute(
        "SELECT id FROM model_shape WHERE illustrative ORDER BY params, active_params").fetchall()]
    rows = []
    for h in hws:
        spec = hardware(con, h)
        if spec.get("memory_bandwidth") is None or spec.get("memory_capacity") is None:
            continue
        for m in models:
            r = decode(con, hardware_id=h, model_id=m, precision=precision, context=context,
                       batch=batch, efficiency=efficiency)
            rows.append({"hardware": h, "model": m,
                         "tokens_per_s_per_user": r["outputs"]["tokens_per_s_per_user"],
                         "fits": r["outputs"]["fits"], "basis": r["basis"],
                         "bandwidth": r["inputs"]["bandwidth"]["value"],
                         "memory": r["inputs"]["memory"]["value"]})
    return rows


def speculative(*, alpha: float, c: float, gamma: int | None, max_gamma: int) -> dict:
    """Speculative decoding speedup at ``gamma``, or the best gamma up to ``max_gamma``."""
    out = calc.best_gamma(alpha, c, max_gamma) if gamma is None else \
        {"gamma": gamma, **calc.speculative(alpha, gamma, c)}
    return result("speculative", {"alpha": caller(alpha, "fraction"), "c": caller(c, "ratio")},
                  out)


def tensor_parallel(*, weight_bytes: float, degrees: list[int], bandwidth_per_gpu: float,
                    efficiency: float, layers: int, allreduce_us: float) -> dict:
    """Time per token at each tensor-parallel degree."""
    rows = [{"tp": d, **arith(calc.tensor_parallel, weight_bytes=weight_bytes, tp=d,
                              bandwidth_per_gpu=bandwidth_per_gpu, efficiency=efficiency,
                              layers=layers, allreduce_latency=allreduce_us * 1e-6)}
            for d in degrees]
    return result("tensor-parallel", {
        "weight_bytes": caller(weight_bytes, "B"),
        "bandwidth_per_gpu": caller(bandwidth_per_gpu, "B/s"),
        "efficiency": caller(efficiency, "fraction"), "layers": caller(layers, "count"),
        "allreduce_latency": caller(allreduce_us * 1e-6, "s")}, {"rows": rows})


def kv_transfer(con, *, model_id: str | None, prompt_tokens: int, precision: str,
                links: list[float], layers: int | None = None, kv_heads: int | None = None,
                head_dim: int | None = None) -> dict:
    """KV cache size of a prompt and the time to move it over each link bandwidth."""
    md = model(con, model_id) if model_id else {}
    inputs = {"layers": pick(layers, "count", md.get("layers")),
              "kv_heads": pick(kv_heads, "count", md.get("kv_heads")),
              "head_dim": pick(head_dim, "count", md.get("head_dim")),
              "kv_bytes_per_value": bytes_per_value(precision)}
    lay, kvh, hd = need(inputs, "layers", "kv_heads", "head_dim", param="model")
    per_token = calc.kv_bytes_per_token(int(lay), int(kvh), int(hd),
                                        calc.BYTES_PER_VALUE[precision])
    rows = [{"link_bandwidth": bw, **arith(calc.kv_transfer, kv_per_token=per_token,
                                           prompt_tokens=prompt_tokens, link_bandwidth=bw)}
            for bw in links]
    return result("kv-transfer", inputs, {"kv_bytes_per_token": per_token, "rows": rows})


def capacity(con, *, model_id: str | None, params: float | None, precision: str,
             hardware_id: str | None, metric: str, capacity_per_unit: float | None) -> dict:
    """Units (chips, wafers, racks) needed to hold a model's weights."""
    md = model(con, model_id) if model_id else {}
    hw = hardware(con, hardware_id) if hardware_id else {}
    inputs = {"params": pick(params, "count", md.get("params")),
              "capacity_per_unit": pick(capacity_per_unit, "B", hw.get(metric)),
              "bytes_per_weight": bytes_per_value(precision)}
    p, = need(inputs, "params", param="model")
    if inputs["capacity_per_unit"] is None or inputs["capacity_per_unit"].value is None:
        has = [m for m in ("memory_capacity", "sram_capacity") if m != metric and hw.get(m)]
        raise QueryError(f"metric: {hardware_id or 'the hardware'} has no {metric}"
                         + (f"; metric={has[0]} uses its {has[0]}" if has else "")
                         + "; or pass capacity_per_unit explicitly", param="metric"
                         if has else "hardware")
    cap = float(inputs["capacity_per_unit"].value)
    return result("capacity", inputs, arith(
        calc.capacity_units, params=p, bytes_per_weight=calc.BYTES_PER_VALUE[precision],
        capacity_per_unit=cap))


def bandwidth_needed(con, *, model_id: str | None, active_params: float | None, precision: str,
                     tpot_ms: float, efficiency: float) -> dict:
    """Bandwidth needed to read the active weights once per TPOT target."""
    md = model(con, model_id) if model_id else {}
    inputs = {"active_params": pick(active_params, "count", md.get("active_params")),
              "tpot": caller(tpot_ms / 1000, "s"), "efficiency": caller(efficiency, "fraction"),
              "bytes_per_weight": bytes_per_value(precision)}
    act, = need(inputs, "active_params", param="model")
    return result("bandwidth-needed", inputs, arith(
        calc.bandwidth_needed, active_params=act, bytes_per_weight=calc.BYTES_PER_VALUE[precision],
        tpot=tpot_ms / 1000, efficiency=efficiency))
