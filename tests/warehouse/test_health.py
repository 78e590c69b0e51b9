"""warehouse.quality.health over a hand-made run journal: staleness, the health summary, history."""

from __future__ import annotations

from warehouse.quality import health


def run(id: str, status: str, **sources: str) -> dict:
    return {"id": id, "started_at": f"2026-12-0{id}T00:00:00+00:00", "status": status,
            "message": f"run {id}", "validation": [
                {"expectation": "e", "success": status != "rejected", "severity": "error"},
                {"expectation": "w", "success": False, "severity": "warning"}],
            "sources": [{"source": k, "status": v, "message": f"{k} {v}"}
                        for k, v in sources.items()]}


JOURNAL = [run("3", "partial", mlperf="failed", curated="unchanged"),  # newest first
           run("2", "rejected", mlperf="updated", curated="updated"),
           run("1", "published", mlperf="updated", curated="updated")]


def test_a_source_whose_last_attempt_failed_is_stale_since_its_last_success():
    status = health.source_status(JOURNAL)
    assert status["mlperf"]["stale"] and status["mlperf"]["last_status"] == "failed"
    # run 2 was rejected: its successful fetch is not what is served
    assert status["mlperf"]["last_success"] == status["mlperf"]["stale_since"] == JOURNAL[2]["started_at"]
    assert status["mlperf"]["stale_for_seconds"] > 0
    assert not status["curated"]["stale"] and status["curated"]["last_success"] == JOURNAL[0]["started_at"]


def test_a_clock_behind_the_journal_says_no_age_not_a_negative_one():
    ahead = [{**r, "started_at": r["started_at"].replace("2026", "2099")} for r in JOURNAL]
    status = health.source_status(ahead)
    assert status["mlperf"]["stale"] and status["mlperf"]["stale_for_seconds"] == 0


def test_health_summary():
    validation = [{"expectation": "e", "success": True, "severity": "error"},
                  {"expectation": "w", "success": False, "severity": "warning"}]
    got = health.health("snap", None, validation, JOURNAL)
    assert got["status"] == "degraded"  # mlperf is stale: its last attempt failed
    assert got["validation"] == {"errors": 0, "warnings": ["w"], "no_rows": []}
    empty_table = [{"expectation": "e", "success": True, "severity": "error",
                    "table_name": "azure_price", "rows_checked": 0}]
    assert health.health("snap", None, empty_table, JOURNAL)["validation"]["no_rows"] == [
        "azure_price"]
    clean = [run("4", "published", mlperf="updated", curated="unchanged"), *JOURNAL]
    assert health.health("snap", None, validation, clean)["status"] == "ok"
    rejected = [run("4", "rejected", mlperf="updated", curated="updated"), *clean]
    assert health.health("snap", None, validation, rejected)["status"] == "degraded"
    running = [{**run("5", "running"), "sources": []}, *clean]  # a refresh in progress
    assert health.health("snap", None, validation, running)["status"] == "ok"
    assert got["last_refresh"] == {"id": "3", "status": "partial", "message": "run 3",
                                   "started_at": JOURNAL[0]["started_at"],
                                   "clock_behind_seconds": 0}
    assert health.health(None, None, [], [])["status"] == "empty"


def test_refresh_history_filters_limits_and_links():
    got = health.refreshes(JOURNAL, ["published", "rejected"], limit=1)
    assert got["total"] == 2 and [r["id"] for r in got["rows"]] == ["2"]
    assert "validation" not in got["rows"][0] and "links" not in got["rows"][0]
    assert JOURNAL[1]["validation"]  # the journal itself is not changed
    one = health.refresh_validation(JOURNAL, "2")
    assert one["errors"] == 1 and one["warnings"] == 1 and one["status"] == "rejected"
    assert health.refresh_validation(JOURNAL, "9") is None


def test_state_of_a_source():
    """Switched off is neither failed nor stale; a failure with nothing ever loaded is 'never
    loaded'; a failure after a success is stale; a partial load is stale (some parts loaded)."""
    assert health.state("disabled", None) == health.state("disabled", "t") == "disabled"
    assert health.state("failed", None) == "never_loaded"
    assert health.state("failed", "t") == health.state("partial", None) == "stale"
    assert health.state("updated", "t") == health.state("unchanged", "t") == "fresh"
    off = [run("5", "published", mlperf="updated", curated="disabled")]
    got = health.health("snap", None, [], off)
    assert got["status"] == "ok"
    assert {s["source"]: s["state"] for s in got["sources"]} == {"mlperf": "fresh",
                                                                 "curated": "disabled"}
    never = [run("6", "partial", mlperf="updated", curated="failed")]
    assert health.health("snap", None, [], never)["status"] == "degraded"
    assert "never loaded" in health.absent_reason("curated", never)
    assert "switched off" in health.absent_reason("curated", off)


def test_an_absent_source_is_named_once():
    runs = [{"started_at": "2026-12-04T00:00:00+00:00", "status": "partial", "sources": [
        {"source": "azure_prices", "status": "failed",
         "message": "azure_prices: page 1: https://prices.azure.com/… failed"}]}]
    assert health.absent_reason("azure_prices", runs) == (
        "the azure_prices source has never loaded (last attempt failed: page 1: "
        "https://prices.azure.com/… failed); see /healthz")


def test_a_partial_load_is_a_success_a_later_failure_keeps():
    """One round loaded (partial), then the source failed: its rows are served, so it is
    stale since the partial run, never 'never loaded'."""
    runs = [run("2", "failed", mlperf="failed"), run("1", "partial", mlperf="partial")]
    status = health.source_status(runs)["mlperf"]
    assert status["state"] == "stale" and status["stale_since"] == runs[1]["started_at"]
