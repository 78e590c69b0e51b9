"""Operations views over the run journal: source freshness (the last attempt, the last
success, whether the data served is stale), the health summary, refresh history."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from warehouse.model.vocabulary import (
    DISABLED_MESSAGE,
    LOADED,
    PUBLISHED,
    RunStatus,
    SourceState,
    SourceStatus,
)
from warehouse.redact import redact_text


def source_status(runs: list[dict]) -> dict[str, dict]:
    """Per source: last_status, last_attempt, last_success, state (``state``), stale,
    stale_since, message.

    ``runs`` is the journal, newest first.
    """
    out: dict[str, dict] = {}
    for run in runs:
        for s in outcomes(run):
            name = s["source"]
            entry = out.setdefault(name, {"source": name, "last_status": s["status"],
                                          "last_attempt": run["started_at"],
                                          "message": s.get("message", ""),
                                          "last_success": None})
            if entry["last_success"] is None and s["status"] in LOADED \
                    and run["status"] in (*PUBLISHED, RunStatus.unchanged):
                entry["last_success"] = run["started_at"]
    now = datetime.now(UTC)
    for entry in out.values():
        entry["state"] = state(entry["last_status"], entry["last_success"])
        entry["stale"] = entry["state"] == SourceState.stale
        entry["stale_since"] = entry["last_success"] if entry["stale"] else None
        if entry["stale"] and entry["last_success"]:
            age = now - datetime.fromisoformat(entry["last_success"])
            # a clock behind the store (``clock_behind``) gives an age of 0, never a negative one
            entry["stale_for_seconds"] = max(0, int(age.total_seconds()))
    return out


def outcomes(run: dict) -> list[dict]:
    """A run's outcome per source, the switched-off ones (``disabled``) said as such."""
    return run.get("sources", []) + [{"source": name, "status": SourceStatus.disabled,
                                      "message": DISABLED_MESSAGE}
                                     for name in run.get("disabled", [])]


def no_rows(result: dict) -> bool:
    """A validation rule that held only because its table has no rows: 'no rows', not
    'passed'."""
    return bool(result.get("success")) and result.get("rows_checked") == 0


def state(last_status: str, last_success: str | None) -> SourceState:
    """A source's state in one word: ``disabled`` (``enabled = false``: neither failed nor
    stale), ``never_loaded`` (it failed and no attempt ever succeeded: there is nothing to
    keep), ``stale`` (it failed or partly failed; its last good data is served) or ``fresh``."""
    if last_status == SourceStatus.disabled:
        return SourceState.disabled
    if last_status == SourceStatus.partial:  # some parts (rounds) loaded
        return SourceState.stale
    if last_status == SourceStatus.failed:
        return SourceState.stale if last_success else SourceState.never_loaded
    return SourceState.fresh


def absent_reason(source: str, runs: list[dict]) -> str:
    """Why ``source`` has no rows in a snapshot, from the run journal (newest first)."""
    entry = source_status(runs).get(source)
    if entry is None:
        return f"the {source} source has never been refreshed"
    if entry["state"] == SourceState.disabled:
        return f"the {source} source is switched off (enabled = false in its sources file)"
    if entry["state"] != SourceState.never_loaded:  # it loaded once, yet this snapshot has none of it
        return f"the {source} source has no rows in this snapshot; see /healthz"
    why = entry["message"].removeprefix(f"{source}: ")  # named once
    return redact_text(f"the {source} source has never loaded (last attempt "
                       f"{entry['last_status']}: {why}); see /healthz")


def failed_parts(source: str, runs: list[dict]) -> dict[str, str]:
    """The parts (rounds, models) of ``source`` that failed in its latest run: part -> why."""
    for run in runs:
        for s in outcomes(run):
            if s["source"] == source:
                return {part: redact_text(why) for part, why in (s.get("stale") or {}).items()}
    return {}


def snapshot_journal(con) -> list[dict]:
    """The run journal as a snapshot recorded it when published (``refresh_run``), newest
    first, in the form ``source_status`` reads."""
    return [{"started_at": str(started), "status": status, "sources": json.loads(outcome or "[]")}
            for started, status, outcome in con.execute(
                "SELECT started_at, status, outcome FROM refresh_run "
                "ORDER BY started_at DESC").fetchall()]


def health(opened_id: str | None, published_at: datetime | None, validation: list[dict],
           runs: list[dict], accelerators: dict | None = None,
           corrupt: dict | None = None) -> dict:
    """What ``/healthz`` answers: ``status`` (ok; degraded when a source is stale or has never
    loaded (a disabled one does not count), the last
    refresh failed, was rejected or was interrupted, or the published snapshot cannot be read
    (``corrupt``: its id and why; an older one is served); empty before the first publish),
    the snapshot served, per-source freshness from the run journal (newest first), the last
    refresh, the validation summary of the snapshot and, given ``accelerators`` (the
    snapshot's coverage, ``queries.coverage``), how its accelerator names map per round."""
    sources = list(source_status(runs).values())
    finished = [r for r in runs if r.get("status") != RunStatus.running]
    last_bad = bool(finished) and finished[0]["status"] in (RunStatus.failed, RunStatus.rejected,
                                                             RunStatus.interrupted)
    behind = clock_behind(published_at, runs)
    if not opened_id:
        status = "empty"
    elif corrupt or last_bad or behind or any(
            s["state"] in (SourceState.stale, SourceState.never_loaded) for s in sources):
        status = "degraded"
    else:
        status = "ok"
    return {
        "status": status,
        "corrupt": ({"snapshot_id": corrupt["snapshot_id"], "reason": corrupt["reason"],
                     "message": f"corrupt snapshot {corrupt['snapshot_id']}"}
                    if corrupt else None),
        "published_at": published_at,
        "sources": sources,
        "last_refresh": ({**{k: runs[0][k] for k in ("id", "status", "message", "started_at")},
                          "clock_behind_seconds": behind} if runs else None),
        "validation": {
            "errors": sum(1 for v in validation if not v["success"] and v["severity"] == "error"),
            "warnings": [v["expectation"] for v in validation
                         if not v["success"] and v["severity"] == "warning"],
            "no_rows": sorted({v["table_name"] for v in validation if no_rows(v)})},
        "accelerators": {rnd: {k: v for k, v in c.items() if k not in ("unmapped", "ambiguous")}
                         for rnd, c in (accelerators or {}).get("accelerators_by_round",
                                                                 {}).items()},
    }


def clock_behind(published_at: datetime | None, runs: list[dict]) -> int:
    """Seconds the clock is behind the snapshot served (this process's clock) or was behind
    the store at the last refresh (its run record), whichever is more; 0 within 2 s."""
    now = datetime.now(UTC)
    live = (published_at - now).total_seconds() if published_at else 0.0
    recorded = runs[0].get("clock_behind_seconds") or 0 if runs else 0
    behind = max(live, recorded)
    return round(behind) if behind > 2 else 0


def refreshes(runs: list[dict], statuses: list[str], limit: int) -> dict:
    """Refresh runs (newest first), optionally only those with a status in ``statuses``,
    without their validation results (``refresh_validation`` has them)."""
    chosen = [r for r in runs if not statuses or r["status"] in statuses]
    return {"total": len(chosen),
            "rows": [{k: v for k, v in r.items() if k != "validation"} for r in chosen[:limit]]}


def refresh_validation(runs: list[dict], run_id: str) -> dict | None:
    """One run's validation results with its error and warning counts; None if no such run."""
    run = next((r for r in runs if r["id"] == run_id), None)
    if run is None:
        return None
    results = run.get("validation", [])
    return {"run_id": run_id, "status": run["status"],
            "errors": sum(1 for v in results if not v["success"] and v["severity"] == "error"),
            "warnings": sum(1 for v in results if not v["success"] and v["severity"] == "warning"),
            "rows": results}
