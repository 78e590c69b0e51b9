"""One typed settings object, read at the edges (CLI, app factory) and passed inward."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

REPO_ROOT = Path(__file__).resolve().parent.parent


def _cores() -> int:
    """The cores this process may run on (its CPU affinity, where the system tells it)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class Settings(BaseSettings):
    """perfledger settings; every field can be set as ``PERFLEDGER_<NAME>``."""

    model_config = SettingsConfigDict(env_prefix="PERFLEDGER_", extra="ignore")

    data_dir: Path = Field(Path("var"), description="Directory for snapshots, raw store, runs.")
    sources: Path = Field(REPO_ROOT / "sources.toml", description="The sources TOML file.")
    http_timeout: float = Field(30.0, gt=0, description="Seconds before an HTTP request times out.")
    http_retries: int = Field(3, ge=0, le=10, description="Retries after a failed HTTP attempt.")
    http_backoff: float = Field(
        0.5, ge=0, description="First backoff in seconds; doubles on each retry."
    )
    http_max_wait: float = Field(
        30.0, ge=0, description="Longest wait between retries, Retry-After included."
    )
    http_deadline: float = Field(
        300.0, gt=0, description="Seconds one HTTP request may take in all (retries and waits "
        "included); a server that trickles past it fails the fetch.")
    source_deadline: float = Field(
        1800.0, gt=0, description="Seconds one source may take in a refresh; past it the source "
        "fails (deadline exceeded) and the refresh goes on with the others.")
    refresh_deadline: float = Field(
        3600.0, gt=0, description="Seconds a whole refresh may spend on its sources; sources "
        "still fetching past it fail, so the lock is never held for hours.")
    refresh_memory_mb: int = Field(
        256, ge=64, description="DuckDB memory limit (MB, as DuckDB counts: 10^6 bytes) of a "
        "refresh's staging connection; beyond it DuckDB spills to a temporary file next to the snapshot.")
    api_host: str = Field("127.0.0.1", description="Address the API listens on.")
    api_port: int = Field(8000, ge=1, le=65535, description="Port the API listens on.")
    api_workers: int = Field(1, ge=1, description="uvicorn worker processes.")
    api_threads: int = Field(
        default_factory=lambda: min(2 * _cores(), 40), ge=1,
        description="Requests one worker computes at once (the threads its routes run in; "
        "the rest wait their turn). Default: twice the cores this process may run on, at most "
        "40 (anyio's own limit); a container's CPU limit is not seen: set it to twice that. "
        "More threads than the cores can take contend for Python's lock and answer fewer "
        "requests, later.")
    api_public_url: str | None = Field(
        None, description="Base URL clients reach the API at (e.g. https://perf.example.com); "
        "next links are built from it. Unset: http://api_host:api_port. Never taken from a "
        "request's Host header.")
    api_forwarded_allow_ips: str = Field(
        "127.0.0.1", description="Proxy addresses whose X-Forwarded-Proto/For headers uvicorn "
        "trusts (comma-separated; uvicorn's forwarded_allow_ips).")
    api_shutdown_timeout: int = Field(
        10, ge=1, description="Seconds serve waits for open connections on SIGTERM before "
        "closing them (uvicorn's graceful-shutdown timeout).")
    api_access_log: bool = Field(True, description="Log one line per request (uvicorn's access "
                                 "log); off spares every request a log write.")
    api_keep_alive_timeout: int = Field(
        5, ge=1, le=600, description="Seconds an idle kept-alive connection stays open after a "
        "response (uvicorn's timeout_keep_alive).")
    api_header_timeout: float = Field(
        10.0, gt=0, le=600, description="Seconds a connection may take to send a whole request "
        "head (request line and headers), from when it opens and from the first byte of each "
        "request; an idle or half-sent connection is closed after it.")
    api_limit_concurrency: int | None = Field(
        None, ge=1, description="Connections and requests one worker takes at once before "
        "answering 503 (uvicorn's limit_concurrency); unset: 64 below the process's "
        "file-descriptor limit, and never above it.")
    api_max_limit: int = Field(1000, ge=1, description="Largest page size a list endpoint returns.")
    api_cache_max_age: int = Field(60, ge=0, description="Cache-Control max-age in seconds.")
    api_response_cache_mb: int = Field(
        128, ge=0, description="Memory the response cache may hold per worker, in MB: a "
        "snapshot never changes, so a repeated request is answered from memory (the least "
        "recently used answers are dropped first); 0 turns the cache off.")
    api_cors_origins: list[str] = Field(
        default_factory=list, description="Origins allowed by CORS; empty means CORS off."
    )
    api_warm: bool = Field(
        True, description="Build what a snapshot's answers share (hot views, serving tables) "
        "before it serves: at start, and, when a refresh publishes, in the background while the "
        "previous snapshot keeps serving; false builds them on the first request that needs "
        "them and swaps at once.")
    snapshot_check_interval: float = Field(
        1.0, ge=0, description="Seconds between API checks for a newly published snapshot."
    )
    retention_count: int = Field(10, ge=1, description="Snapshot files kept, the current included.")
    retention_days: float | None = Field(
        None, gt=0, description="Also delete snapshot files older than this many days (never "
        "the current one); unset keeps them until retention_count."
    )
    min_free_mb: int = Field(
        64, ge=0, description="Free disk (MiB) a refresh needs beyond twice the current snapshot."
    )
    shrink_ratio: float = Field(
        0.5, ge=0, le=1, description="Reject a source returning fewer than this share of last rows."
    )
    growth_ratio: float = Field(
        10.0, ge=1, description="Reject a source returning more than this many times its last "
        "rows (and over 1,000 rows) unless `refresh --accept-growth`.")
    max_body_mb: float = Field(
        32.0, gt=0, description="Largest body (MiB, decompressed) one fetch may return; a "
        "source's max_body_mb in sources.toml overrides it. Past it the source fails.")
    max_inflation: float = Field(
        100.0, ge=1, description="Largest ratio of a body's decompressed size to its size on "
        "the wire (bodies over 1 MiB); past it the source fails as a decompression bomb.")

    @property
    def public_url(self) -> str:
        """The base of every link the API writes."""
        if self.api_public_url:
            return self.api_public_url.rstrip("/")
        return f"http://{self.api_host}:{self.api_port}"

    @property
    def data_path(self) -> Path:
        """The data directory as an absolute path."""
        return self.data_dir.resolve()
