"""Source freshness from the run journal: per source, the last attempt, the last success, and
whether the data now served for it is stale (its latest attempt failed)."""

from __future__ import annotations

from datetime import UTC, datetime


def source_status(runs: list[dict]) -> dict[str, dict]:
    """Per source: last_status, last_attempt, last_success, stale, stale_since, message.

    ``runs`` is the journal, newest first.
    """
    out: dict[str, dict] = {}
    for run in runs:
        for s in run.get("sources", []):
            name = s["source"]
            entry = out.setdefault(name, {"source": name, "last_status": s["status"],
                                          "last_attempt": run["started_at"],
                                          "message": s.get("message", ""),
                                          "last_success": None})
            if entry["last_success"] is None and s["status"] in ("updated", "unchanged") \
                    and run["status"] in ("published", "partial", "unchanged"):
                entry["last_success"] = run["started_at"]
    now = datetime.now(UTC)
    for entry in out.values():
        entry["stale"] = entry["last_status"] == "failed"
        entry["stale_since"] = entry["last_success"] if entry["stale"] else None
        if entry["stale"] and entry["last_success"]:
            age = now - datetime.fromisoformat(entry["last_success"])
            entry["stale_for_seconds"] = int(age.total_seconds())
    return out
