"""Per GPU means per every GPU: InferenceX rows counted and checked against the publisher's
own invariants, written once as SQL (the view ``observation`` and the validation rules both
read ``observation_sql``).

**The GPU-count rule** (every GPU the configuration occupies):

* aggregated, one node: TP × PP × PCP (``decode_tp × pp × pcp_size``; PP and PCP read as 1
  where not published). InferenceX's runner divides by exactly that; the published
  ``num_prefill_gpu``/``num_decode_gpu`` of these rows are filled by its app as TP × EP (a TP8
  EP8 row says 64 and uses 8), so they are not counted. DCP and EP share the TP GPUs.
* aggregated, multinode: the published counts added (the runner writes all GPUs as prefill
  and 0 as decode, flagging such a row disagg as well: a multinode row with 0 decode GPUs is
  read as aggregated).
* disaggregated: prefill GPUs + decode GPUs as published, when they satisfy the publisher's
  invariant below. Where the published counts mirror one figure (prefill = decode = TP × EP,
  the app's fill-in for rows the runner sent without counts) and fail it, the split is
  solved from the invariant with that figure as the total — used only when the solved
  prefill count is a whole number (to 1e-6) between 1 and the total less 1; otherwise the
  published counts stay and the row is flagged.

**Per every GPU**: ``tput_per_gpu`` as published (InferenceX divides the total by all GPUs);
``output_tput_per_gpu`` = published output per decode GPU × decode GPUs ÷ all GPUs and
``input_tput_per_gpu`` = published input per prefill GPU × prefill GPUs ÷ all GPUs on
disaggregated rows (the published figures on aggregated ones, which already divide by all).

**The invariants** (``INVARIANTS``; a row that breaks one is flagged with the rule named in
``invariant_failures`` and left off the frontier, never drawn):

* aggregated: total = input + output per GPU (relative tolerance 1e-6);
* disaggregated: input × prefill GPUs + output × decode GPUs = total × all GPUs (1e-6);
* physical: concurrency × median interactivity ÷ (output tokens/s per GPU × GPUs) between 0.8
  and 2.5, on rows that are not prefill-bound (median TTFT at most a tenth of the median
  end-to-end latency). Little's law puts it at about 1 plus the TTFT share; ramp-up at low
  concurrency reads up to about 2.4 on published rows; a wrong count reads at its factor
  (TP × EP for TP: 1/8; decode GPUs for all: above 2.5 at 3:1 and more).
* power: total GPU power ÷ mean power per GPU = GPUs (within 1 %), where both are published
  with a valid power verdict — the publisher's own count of the GPUs it measured;
* figures: input, output and total per GPU published, so the rules can be checked.
"""

from __future__ import annotations

from warehouse.model.vocabulary import sql_text as _lit

TOLERANCE = 1e-6
PHYSICAL_RANGE = (0.8, 2.5)
PREFILL_BOUND_SHARE = 0.1
POWER_TOLERANCE = 0.01

# Rule names, as ``invariant_failures`` and the validation report say them.
AGGREGATED = "aggregated: total = input + output per GPU"
DISAGGREGATED = "disaggregated: input x prefill GPUs + output x decode GPUs = total x all GPUs"
PHYSICAL = (f"physical: concurrency x median interactivity / (output per GPU x GPUs) within "
            f"{PHYSICAL_RANGE[0]}-{PHYSICAL_RANGE[1]} (rows not prefill-bound)")
POWER = "power: total GPU power / mean power per GPU = GPUs (within 1 %)"
FIGURES = "figures: input, output and total tokens/s per GPU published"
INVARIANTS = (FIGURES, AGGREGATED, DISAGGREGATED, PHYSICAL, POWER)

COUNT_BASES = {
    "aggregated": "TP x PP x PCP (aggregated, one node; the published counts are TP x EP)",
    "multinode": "published GPUs (aggregated, multinode)",
    "published": "published prefill + decode GPUs (disaggregated)",
    "solved": "prefill/decode split solved from the publisher's invariant (the published "
              "counts mirror one total)",
}


def _gpu_count_ctes(relation: str) -> str:
    """The CTEs o0..o3 over ``relation``: the published figures under short names, whether a
    disaggregated row's published counts reconcile, and else the prefill/decode split solved
    from the publisher's invariant; the GPUs every figure is divided by, with its basis."""
    tol = TOLERANCE
    return f"""o0 AS (
    SELECT o.*, o.input_tput_per_prefill_gpu AS i_, o.output_tput_per_decode_gpu AS o_,
           o.tput_per_gpu AS t_, o.num_prefill_gpu AS p_, o.num_decode_gpu AS d_,
           o.disagg IS TRUE AND NOT (o.is_multinode IS TRUE AND o.num_decode_gpu = 0) AS dis_
    FROM {relation} o
),
o1 AS (
    SELECT *, dis_ AND i_ IS NOT NULL AND o_ IS NOT NULL AND t_ IS NOT NULL
              AND abs(i_ * p_ + o_ * d_ - t_ * (p_ + d_)) <= {tol} * t_ * (p_ + d_) AS pub_ok_,
           CASE WHEN dis_ AND p_ = d_ AND i_ <> o_ THEN p_ * (t_ - o_) / (i_ - o_) END AS solve_
    FROM o0
),
o2 AS (
    SELECT *, NOT pub_ok_ AND solve_ IS NOT NULL
              AND abs(solve_ - round(solve_)) <= {tol} * p_
              AND round(solve_) BETWEEN 1 AND p_ - 1 AS solved_
    FROM o1
),
o3 AS (
    SELECT *,
        CASE WHEN NOT dis_ THEN NULL WHEN solved_ THEN round(solve_)::INTEGER ELSE p_ END
            AS prefill_gpus,
        CASE WHEN NOT dis_ THEN NULL WHEN solved_ THEN p_ - round(solve_)::INTEGER ELSE d_ END
            AS decode_gpus,
        CASE WHEN dis_ AND solved_ THEN p_
             WHEN dis_ THEN p_ + d_
             WHEN is_multinode THEN coalesce(p_, 0) + coalesce(d_, 0)
             ELSE decode_tp * coalesce(pp, 1) * coalesce(pcp_size, 1) END AS gpus,
        CASE WHEN dis_ AND solved_ THEN {_lit(COUNT_BASES["solved"])}
             WHEN dis_ THEN {_lit(COUNT_BASES["published"])}
             WHEN is_multinode THEN {_lit(COUNT_BASES["multinode"])}
             ELSE {_lit(COUNT_BASES["aggregated"])} END AS gpu_count_basis
    FROM o2
)"""  # noqa: S608 - the relation is the code's own


def observation_sql(relation: str) -> str:
    """SELECT every column of ``relation`` (inferencex_observation's columns) with the GPU
    counts, the per-every-GPU figures, the physical ratio and the broken invariants."""
    tol, (lo, hi) = TOLERANCE, PHYSICAL_RANGE
    return f"""
WITH {_gpu_count_ctes(relation)},
o4 AS (
    SELECT *,
        CASE WHEN dis_ THEN i_ * prefill_gpus / gpus ELSE i_ END AS input_tput_per_gpu,
        CASE WHEN dis_ THEN o_ * decode_gpus / gpus ELSE o_ END AS output_tput_per_gpu
    FROM o3
),
o5 AS (
    SELECT *, conc * interactivity / (output_tput_per_gpu * gpus) AS physical_ratio,
           ttft_median_s <= {PREFILL_BOUND_SHARE} * e2el_median_s AS not_prefill_bound_
    FROM o4
)
SELECT * EXCLUDE (i_, o_, t_, p_, d_, dis_, pub_ok_, solve_, solved_, not_prefill_bound_),
       nullif(concat_ws('; ',
           CASE WHEN i_ IS NULL OR o_ IS NULL OR t_ IS NULL THEN {_lit(FIGURES)} END,
           CASE WHEN NOT dis_ AND abs(i_ + o_ - t_) > {tol} * t_ THEN {_lit(AGGREGATED)} END,
           CASE WHEN dis_ AND abs(i_ * prefill_gpus + o_ * decode_gpus - t_ * gpus)
                               > {tol} * t_ * gpus THEN {_lit(DISAGGREGATED)} END,
           CASE WHEN not_prefill_bound_ AND NOT physical_ratio BETWEEN {lo} AND {hi}
                THEN {_lit(PHYSICAL)} END,
           CASE WHEN abs(avg_total_gpu_power_w / avg_power_w - gpus) > {POWER_TOLERANCE} * gpus
                THEN {_lit(POWER)} END), '') AS invariant_failures
FROM o5"""  # noqa: S608 - the relation is the code's own; every value a literal here
