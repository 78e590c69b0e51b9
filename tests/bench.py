"""`make bench`: refresh and API speed on this machine, next to Datasette serving the same rows
and DuckDB's own query time. Prints a Markdown table; writes every figure to var/bench/.

    .venv/bin/python -m tests.bench            (BENCH_SECONDS=2 per load run, BENCH_REPEATS=3)

Nothing here asserts a speed: it measures and reports.
"""

from __future__ import annotations

import csv
import io
import json
import os
import platform
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import httpx

from tests.azure_emulator import AzureEmulator, generate_items, seed_items
from tests.conftest import AZURE_PATH, full_sources
from tests.helpers import REPO, SUMMARY_CSV, LocalServer, free_port

BIN = Path(sys.executable).parent
SECONDS = float(os.environ.get("BENCH_SECONDS", "2"))
REPEATS = int(os.environ.get("BENCH_REPEATS", "3"))
CONCURRENCY = [int(c) for c in os.environ.get("BENCH_CONCURRENCY", "1,16,64").split(",")]
WRK_LUA = """
done = function(summary, latency, requests)
  io.write(string.format("JSON {\\"requests\\": %d, \\"seconds\\": %f, \\"p50\\": %f, \\"p95\\": %f, \\"p99\\": %f, \\"errors\\": %d, \\"non2xx\\": %d}\\n",
    summary.requests, summary.duration / 1e6, latency:percentile(50) / 1000,
    latency:percentile(95) / 1000, latency:percentile(99) / 1000,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.errors.status))
end
"""


def machine() -> dict:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    import datasette
    import fastapi
    import great_expectations
    return {"cores": os.cpu_count(), "cpu": cpu, "python": platform.python_version(),
            "duckdb": duckdb.__version__, "fastapi": fastapi.__version__,
            "great_expectations": great_expectations.__version__,
            "datasette": datasette.__version__,
            "wrk": subprocess.run(["wrk", "--version"], capture_output=True, text=True).stdout.split("\n")[0]}


def run_refresh(env: dict) -> dict:
    """One `perfledger refresh` process: wall time, stages, peak RSS of it and its children."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t = time.perf_counter()
    done = subprocess.run([BIN / "perfledger", "refresh", "--report", env["BENCH_REPORT"]],
                          env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    report = json.loads(Path(env["BENCH_REPORT"]).read_text())
    fetch = sum(s["seconds"] for s in report["sources"])
    return {"status": report["status"], "exit": done.returncode, "wall_s": wall,
            "stages_s": {"fetch+parse+load": fetch, **report["stages"]},
            "peak_rss_mb_max_child": max(before, peak) / 1024,
            "rows": {s["source"]: s["rows"] for s in report["sources"]},
            "bytes_fetched": sum(s["bytes_fetched"] for s in report["sources"])}


def scaled_csv(rounds: int) -> bytes:
    """The v6.1 summary repeated as `rounds` synthetic rounds (v6.1-s1 …)."""
    rows = list(csv.DictReader(io.StringIO(SUMMARY_CSV.read_text())))
    out = io.StringIO()
    w = csv.DictWriter(out, fieldnames=list(rows[0]), quoting=csv.QUOTE_ALL)
    w.writeheader()
    for i in range(rounds):
        for r in rows:
            w.writerow({**r, "version": f"v6.1-s{i}"})
    return out.getvalue().encode()


def wrk(url: str, concurrency: int, headers: dict | None = None) -> dict:
    script = Path(tempfile.mkstemp(suffix=".lua")[1])
    script.write_text(WRK_LUA)
    cmd = ["wrk", f"-t{min(2, concurrency)}", f"-c{concurrency}", f"-d{max(1, round(SECONDS))}s", "--latency",
           "-s", str(script)]
    for k, v in (headers or {}).items():
        cmd += ["-H", f"{k}: {v}"]
    done = subprocess.run(cmd + [url], capture_output=True, text=True, timeout=SECONDS * 10 + 30)
    script.unlink()
    line = next((x for x in done.stdout.splitlines() if x.startswith("JSON ")), None)
    if line is None:
        raise RuntimeError(f"wrk gave no figures for {url}: {done.stdout[-500:]} {done.stderr[-500:]}")
    data = json.loads(line[5:])
    data["rps"] = data["requests"] / data["seconds"]
    return data


def load(url: str, concurrency: int, headers: dict | None = None) -> dict:
    runs = [wrk(url, concurrency, headers) for _ in range(REPEATS)]
    med = lambda k: statistics.median(r[k] for r in runs)  # noqa: E731
    return {"rps": med("rps"), "p50_ms": med("p50"), "p95_ms": med("p95"), "p99_ms": med("p99"),
            "rps_spread": [min(r["rps"] for r in runs), max(r["rps"] for r in runs)],
            "errors": sum(r["errors"] + r["non2xx"] for r in runs), "runs": runs}


def settle(base: str) -> None:
    """Let the server drain what a load run queued before the next measurement."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(base + "/healthz", timeout=10).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.5)


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)


def serve(env: dict, workers: int) -> tuple[subprocess.Popen, str]:
    port = free_port()
    proc = subprocess.Popen([BIN / "perfledger", "serve", "--port", str(port), "--workers",
                             str(workers)], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            time.sleep(0.2)
    raise RuntimeError("API did not start")


QUERIES = {
    "filtered results (model+scenario)": "/v1/results?model=deepseek-r1&scenario=Interactive",
    "full results page (limit 500)": "/v1/results?limit=500",
    "ratios": "/v1/ratios?model=llama3.1-8b",
    "costs at $10/accelerator-hour": "/v1/costs?basis=assumed&rate=10&model=llama2-70b-99.9&scenario=Interactive",
    "price history, one SKU": "/v1/prices/history?sku=Standard_ND96isr_H100_v5&region=eastus2",
    "calculator grid": "/v1/calc/grid",
}


def floor_ms(snapshot: Path) -> float:
    """DuckDB alone, in process: the filtered results query the API runs, median of 200."""
    from warehouse.queries import ListQuery, run_list
    con = duckdb.connect(str(snapshot), read_only=True, config={"threads": 1})
    q = ListQuery(relation="mlperf_result", with_source=True,
                  equals={"model_id": ["deepseek-r1"], "scenario": ["Interactive"]})
    times: list[float] = []
    cache: dict = {}
    for _ in range(200):
        t = time.perf_counter()
        run_list(con, q, cache)
        times.append(time.perf_counter() - t)
    con.close()
    return statistics.median(times) * 1000


def datasette_db(snapshot: Path, out: Path) -> Path:
    con = duckdb.connect(str(snapshot), read_only=True)
    cur = con.execute("SELECT * EXCLUDE (extras) FROM mlperf_result")
    cols = [d[0] for d in cur.description]
    rows = cur.fetchall()
    con.close()
    db = sqlite3.connect(out)
    db.execute(f"CREATE TABLE mlperf_result ({', '.join(cols)})")
    db.executemany(f"INSERT INTO mlperf_result VALUES ({', '.join('?' * len(cols))})",
                   [tuple(str(v) if hasattr(v, 'isoformat') else v for v in row) for row in rows])
    db.execute("CREATE INDEX ix ON mlperf_result (model_id, scenario)")
    db.commit()
    db.close()
    return out


def main() -> None:
    if shutil.which("wrk") is None:
        sys.exit("wrk is not installed: `make bench` installs it (apt-get install wrk)")
    work = Path(tempfile.mkdtemp(prefix="perfledger-bench-"))
    server = LocalServer().start()
    results: dict = {"machine": machine(), "started": datetime.now(UTC).isoformat(),
                     "settings": {"seconds": SECONDS, "repeats": REPEATS}}
    try:
        # ---- refresh, 1x: real CSV + rules + curated + 100,000 generated Azure items
        server.files["/summary.csv"] = SUMMARY_CSV.read_bytes()
        items = seed_items() + generate_items(100_000)
        server.handlers[AZURE_PATH] = AzureEmulator(items, base_url=server.url(AZURE_PATH))
        one = work / "one"
        one.mkdir()
        sources = full_sources(one / "sources.toml", server,
                               mlperf=f'rounds = {{ "v6.1" = "{server.url("/summary.csv")}" }}')
        env = {**os.environ, "PERFLEDGER_DATA_DIR": str(one / "var"),
               "PERFLEDGER_SOURCES": str(sources), "BENCH_REPORT": str(one / "report.json")}
        print("refresh 1x …", file=sys.stderr)
        results["refresh_1x"] = run_refresh(env)
        snap = Path(json.loads((one / "var" / "CURRENT").read_text())["file"])
        snapshot = one / "var" / "snapshots" / snap
        results["refresh_1x"]["snapshot_mb"] = snapshot.stat().st_size / 2**20
        print("refresh, no change …", file=sys.stderr)
        results["refresh_unchanged"] = run_refresh(env)

        # ---- API under load, 1 and 2 workers; peer and floor on the same snapshot
        results["floor_ms"] = floor_ms(snapshot)
        results["api"] = {}
        for workers in (1, 2):
            proc, base = serve(env, workers)
            try:
                for name, path in QUERIES.items():
                    for c in (CONCURRENCY if workers == 1 else [c for c in CONCURRENCY if c > 1]):
                        print(f"api {workers}w {name} c={c} …", file=sys.stderr)
                        results["api"][f"{workers}w|{name}|{c}"] = load(base + path, c)
                        settle(base)
                etag = httpx.get(base + QUERIES["filtered results (model+scenario)"],
                                 timeout=30).headers["etag"]
                for c in (CONCURRENCY if workers == 1 else [c for c in CONCURRENCY if c > 1]):
                    results["api"][f"{workers}w|304 revalidation|{c}"] = load(
                        base + QUERIES["filtered results (model+scenario)"], c, {"If-None-Match": etag})
            finally:
                stop(proc)

        # ---- the same with the in-memory response cache off: every request runs its query
        proc, base = serve({**env, "PERFLEDGER_API_RESPONSE_CACHE": "0"}, 1)
        try:
            results["api_nocache"] = {}
            for name in ("filtered results (model+scenario)", "costs at $10/accelerator-hour"):
                for c in CONCURRENCY:
                    print(f"api 1w no-cache {name} c={c} …", file=sys.stderr)
                    results["api_nocache"][f"{name}|{c}"] = load(base + QUERIES[name], c)
                    settle(base)
        finally:
            stop(proc)

        # ---- Datasette, same rows, equivalent filtered JSON request
        db = datasette_db(snapshot, work / "results.db")
        port = free_port()
        ds = subprocess.Popen([BIN / "datasette", "serve", str(db), "--port", str(port),
                               "--setting", "num_sql_threads", "3"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            base = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                try:
                    httpx.get(base + "/-/versions.json", timeout=1)
                    break
                except httpx.HTTPError:
                    time.sleep(0.2)
            url = base + "/results/mlperf_result.json?model_id=deepseek-r1&scenario=Interactive&_shape=array"
            results["datasette"] = {c: load(url, c) for c in CONCURRENCY}
        finally:
            stop(ds)

        # ---- 100x results data
        print("refresh 100x …", file=sys.stderr)
        server.files["/summary.csv"] = scaled_csv(100)
        big = work / "big"
        big.mkdir()
        shutil.copytree(one / "var", big / "var")
        sources_big = full_sources(big / "sources.toml", server,
                                   mlperf=f'rounds = {{ "synthetic" = "{server.url("/summary.csv")}" }}')
        env_big = {**env, "PERFLEDGER_DATA_DIR": str(big / "var"),
                   "PERFLEDGER_SOURCES": str(sources_big), "BENCH_REPORT": str(big / "report.json")}
        results["refresh_100x"] = run_refresh(env_big)
        proc, base = serve(env_big, 1)
        try:
            results["api_100x"] = {
                c: load(base + QUERIES["filtered results (model+scenario)"] + "&round=v6.1-s7", c)
                for c in CONCURRENCY}
        finally:
            stop(proc)
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)

    results["finished"] = datetime.now(UTC).isoformat()
    out_dir = REPO / "var" / "bench"
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"bench-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}.json"
    path.write_text(json.dumps(results, indent=1, default=str))
    print(report(results))
    print(f"\nall figures: {path.relative_to(REPO)}")


def report(r: dict) -> str:
    m = r["machine"]
    lines = [f"## perfledger bench — {m['cores']} cores, {m['cpu']}",
             f"Python {m['python']}, duckdb {m['duckdb']}, fastapi {m['fastapi']}, "
             f"great-expectations {m['great_expectations']}, datasette {m['datasette']}, {m['wrk']}; "
             f"{r['settings']['repeats']} runs of {r['settings']['seconds']:.0f} s each, medians.", "",
             "### Refresh", "", "| run | status | wall s | stages (s) | peak RSS MB | snapshot MB |",
             "|---|---|---|---|---|---|"]
    for key in ("refresh_1x", "refresh_unchanged", "refresh_100x"):
        x = r[key]
        stages = ", ".join(f"{k} {v:.2f}" for k, v in x["stages_s"].items())
        lines.append(f"| {key} | {x['status']} | {x['wall_s']:.1f} | {stages} | "
                     f"{x['peak_rss_mb_max_child']:.0f} | {x.get('snapshot_mb', 0):.1f} |")
    lines += ["", "### API (wrk, separate process)", "",
              "| workers | query | conc | req/s | p50 ms | p95 ms | p99 ms | errors |",
              "|---|---|---|---|---|---|---|---|"]
    for key, x in r["api"].items():
        w, name, c = key.split("|")
        lines.append(f"| {w} | {name} | {c} | {x['rps']:.0f} | {x['p50_ms']:.1f} | "
                     f"{x['p95_ms']:.1f} | {x['p99_ms']:.1f} | {x['errors']} |")
    lines += ["", "### Same, response cache off (PERFLEDGER_API_RESPONSE_CACHE=0), 1 worker", "",
              "| query | conc | req/s | p50 ms | p95 ms | p99 ms | errors |", "|---|---|---|---|---|---|---|"]
    for key, x in r["api_nocache"].items():
        name, c = key.split("|")
        lines.append(f"| {name} | {c} | {x['rps']:.0f} | {x['p50_ms']:.1f} | {x['p95_ms']:.1f} | "
                     f"{x['p99_ms']:.1f} | {x['errors']} |")
    lines += ["", "### Peer and floor (filtered results, 1 worker; perfledger cached and uncached)", "",
              "| conc | perfledger req/s | uncached req/s | Datasette req/s | ratio (uncached) | perfledger p99 | uncached p99 | Datasette p99 | p99 ratio (uncached) |",
              "|---|---|---|---|---|---|---|---|---|"]
    for c, d in r["datasette"].items():
        p = r["api"][f"1w|filtered results (model+scenario)|{c}"]
        u = r["api_nocache"][f"filtered results (model+scenario)|{c}"]
        lines.append(f"| {c} | {p['rps']:.0f} | {u['rps']:.0f} | {d['rps']:.0f} | "
                     f"{p['rps'] / d['rps']:.2f} ({u['rps'] / d['rps']:.2f}) | {p['p99_ms']:.1f} | "
                     f"{u['p99_ms']:.1f} | {d['p99_ms']:.1f} | {p['p99_ms'] / d['p99_ms']:.2f} "
                     f"({u['p99_ms'] / d['p99_ms']:.2f}) |")
    p1 = r["api_nocache"]["filtered results (model+scenario)|1"]
    lines += ["", f"DuckDB alone, same query in process: median {r['floor_ms']:.2f} ms; uncached API p50 "
              f"at concurrency 1: {p1['p50_ms']:.2f} ms (x{p1['p50_ms'] / r['floor_ms']:.1f} the floor).", "",
              "### 100x results (49,200 rows), filtered query, 1 worker", "",
              "| conc | req/s | p99 ms | p99 at 1x | ratio |", "|---|---|---|---|---|"]
    for c, x in r["api_100x"].items():
        base = r["api"][f"1w|filtered results (model+scenario)|{c}"]
        lines.append(f"| {c} | {x['rps']:.0f} | {x['p99_ms']:.1f} | {base['p99_ms']:.1f} | "
                     f"{x['p99_ms'] / base['p99_ms']:.2f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
