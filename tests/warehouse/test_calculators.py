"""The calculators: pure arithmetic (with Hypothesis properties) and the article's numbers."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from warehouse.figures import calculators as calc

pos = st.floats(min_value=1e-3, max_value=1e6, allow_nan=False, allow_infinity=False)


def test_speculative_article_values():
    assert calc.speculative(0.8, 4, 0.05)["speedup"] == pytest.approx(2.8, abs=0.005)
    best = calc.best_gamma(0.6, 0.05)
    assert best["gamma"] == 4 and round(best["speedup"], 2) == 1.92
    best = calc.best_gamma(0.8, 0.05)
    assert best["gamma"] == 8 and round(best["speedup"], 2) == 3.09


def test_tensor_parallel_article_values():
    kw = dict(weight_bytes=100e9, bandwidth_per_gpu=8e12, efficiency=0.7, layers=80)
    assert round(calc.tensor_parallel(tp=8, allreduce_latency=5e-6, **kw)["tokens_per_s"], -1) == 330
    assert round(calc.tensor_parallel(tp=72, allreduce_latency=5e-6, **kw)["tokens_per_s"], -1) == 950
    assert round(calc.tensor_parallel(tp=72, allreduce_latency=10e-6, **kw)["tokens_per_s"], -1) == 540


def test_kv_transfer_article_values():
    per_token = calc.kv_bytes_per_token(80, 8, 128, 1)
    nvlink = calc.kv_transfer(kv_per_token=per_token, prompt_tokens=8192, link_bandwidth=1.8e12)
    assert round(nvlink["kv_bytes"] / 1e9, 3) == 1.342
    assert round(nvlink["transfer_seconds"] * 1e3, 2) == 0.75
    net = calc.kv_transfer(kv_per_token=per_token, prompt_tokens=8192, link_bandwidth=50e9)
    assert round(net["transfer_seconds"] * 1e3) == 27


def test_bandwidth_needed_and_capacity():
    need = calc.bandwidth_needed(active_params=32e9, bytes_per_weight=1, tpot=0.010, efficiency=0.5)
    assert need["effective_bandwidth"] == pytest.approx(3.2e12)
    assert need["peak_bandwidth"] == pytest.approx(6.4e12)
    wafers = lambda p, b: calc.capacity_units(params=p, bytes_per_weight=b, capacity_per_unit=44e9)["units"]  # noqa: E731
    assert (wafers(405e9, 2), wafers(100e9, 1), wafers(1e12, 1)) == (19, 3, 23)
    racks = lambda b: calc.capacity_units(params=1e12, bytes_per_weight=b, capacity_per_unit=128e9)["units"]  # noqa: E731
    assert (racks(1), racks(0.5)) == (8, 4)


@given(bw=pos, k=st.floats(min_value=0.1, max_value=10), active=pos, kv=pos)
def test_bound_scales_with_bandwidth_and_inversely_with_bytes(bw, k, active, kv):
    base = calc.decode_bound(bandwidth=bw, active_params=active, bytes_per_weight=1,
                             kv_per_token=kv, context=16)["tokens_per_s_per_user"]
    more_bw = calc.decode_bound(bandwidth=bw * k, active_params=active, bytes_per_weight=1,
                                kv_per_token=kv, context=16)["tokens_per_s_per_user"]
    more_bytes = calc.decode_bound(bandwidth=bw, active_params=active * k, bytes_per_weight=1,
                                   kv_per_token=kv * k, context=16)["tokens_per_s_per_user"]
    assert more_bw == pytest.approx(base * k, rel=1e-9)
    assert more_bytes == pytest.approx(base / k, rel=1e-9)


@given(gamma=st.integers(min_value=1, max_value=64))
def test_speedup_is_one_at_alpha_zero_with_free_draft(gamma):
    out = calc.speculative(0.0, gamma, 0.0)
    assert out["expected_tokens_per_step"] == 1.0 and out["speedup"] == 1.0


@given(tp=st.integers(min_value=1, max_value=512), extra=st.integers(min_value=1, max_value=512))
def test_more_tp_never_increases_memory_time(tp, extra):
    kw = dict(weight_bytes=1e11, bandwidth_per_gpu=8e12, efficiency=0.7, layers=80,
              allreduce_latency=5e-6)
    assert calc.tensor_parallel(tp=tp + extra, **kw)["memory_seconds"] <= \
        calc.tensor_parallel(tp=tp, **kw)["memory_seconds"]


@given(alpha=st.floats(min_value=0, max_value=0.99), gamma=st.integers(1, 32),
       c=st.floats(min_value=0, max_value=1))
def test_expected_tokens_between_one_and_gamma_plus_one(alpha, gamma, c):
    e = calc.speculative(alpha, gamma, c)["expected_tokens_per_step"]
    assert 1.0 - 1e-9 <= e <= gamma + 1 + 1e-9
