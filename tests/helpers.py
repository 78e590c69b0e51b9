"""Test helpers: a real local HTTP server with scripted responses, settings for a temp dir,
paths of the real MLPerf files the repository carries (tests/cases/mlperf)."""

from __future__ import annotations

import atexit
import gzip
import hashlib
import shutil
import socket
import tempfile
import threading
import tomllib
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
CASES = REPO / "tests" / "cases"
REAL_CASES = CASES / "mlperf"  # gzip copies of real MLPerf files; PROVENANCE.toml says whose


def carried_cases() -> list[dict]:
    """The entries of tests/cases/mlperf/PROVENANCE.toml: path (of the .gz), upstream URL,
    repository, commit, sha256 and size of the uncompressed bytes."""
    return tomllib.loads((REAL_CASES / "PROVENANCE.toml").read_text(encoding="utf-8"))["file"]


def _unpack_real_cases() -> Path:
    """Decompress every carried file into a fresh temporary directory (removed when the process
    exits), under its upstream name, refusing any whose bytes differ from the recorded sha256.
    Runs once per process: once per test session (per xdist worker) or tool run."""
    out = Path(tempfile.mkdtemp(prefix="perfledger-real-cases-"))
    atexit.register(shutil.rmtree, out, True)
    for entry in carried_cases():
        gz = REAL_CASES / entry["path"]
        body = gzip.decompress(gz.read_bytes())
        digest = hashlib.sha256(body).hexdigest()
        if digest != entry["sha256"]:
            raise RuntimeError(f"{gz}: uncompressed sha256 is {digest}, PROVENANCE.toml records "
                               f"{entry['sha256']} ({entry['upstream']}); the carried copy is damaged")
        target = out / entry["path"].removesuffix(".gz")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(body)
    return out


REAL_DATA = _unpack_real_cases()
SUMMARY_CSV = REAL_DATA / "inference_results_v6.1" / "summary.csv"
V51_JSON = REAL_DATA / "inference_results_v5.1" / "summary_results.json"
RULES_ADOC = REAL_DATA / "inference_policies" / "inference_rules.adoc"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, seconds: float = 60) -> None:
    """Wait until something accepts connections on ``port`` (a server a test started)."""
    import time

    deadline = time.monotonic() + seconds
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            assert time.monotonic() < deadline, f"nothing listens on port {port}"
            time.sleep(0.2)


@dataclass
class Reply:
    """One scripted response. ``truncate`` sends fewer body bytes than Content-Length says."""

    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    truncate: int | None = None


Handler = Callable[["Request"], Reply]


@dataclass
class Request:
    method: str
    path: str
    query: str
    headers: dict[str, str]


class LocalServer:
    """A real HTTP server on 127.0.0.1 in a thread. Each path serves either a fixed body (with
    an ETag and conditional-GET support), a queue of scripted replies, or a handler function.
    Every request is recorded."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.scripts: dict[str, deque[Reply]] = defaultdict(deque)
        self.handlers: dict[str, Handler] = {}
        self.requests: list[Request] = []
        server = self

        class _H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as real servers do
            disable_nagle_algorithm = True  # headers and body go out as written

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                path, _, query = self.path.partition("?")
                req = Request("GET", path, query, {k.lower(): v for k, v in self.headers.items()})
                server.requests.append(req)
                reply = server._reply(req)
                body = reply.body
                self.send_response(reply.status)
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body[: reply.truncate] if reply.truncate is not None else body)
                if reply.truncate is not None:
                    self.close_connection = True

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _H)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def _reply(self, req: Request) -> Reply:
        if self.scripts.get(req.path):
            return self.scripts[req.path].popleft()
        if req.path in self.handlers:
            return self.handlers[req.path](req)
        if req.path in self.files:
            import hashlib

            body = self.files[req.path]
            etag = '"' + hashlib.sha256(body).hexdigest()[:20] + '"'
            if req.headers.get("if-none-match") == etag:
                return Reply(304, b"", {"ETag": etag})
            return Reply(200, body, {"ETag": etag, "Content-Type": "text/plain"})
        return Reply(404, b"not found")

    def reset(self) -> None:
        """Forget files, scripts, handlers and recorded requests."""
        self.files.clear()
        self.scripts.clear()
        self.handlers.clear()
        self.requests.clear()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def hits(self, path: str) -> list[Request]:
        return [r for r in self.requests if r.path == path]

    def start(self) -> LocalServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def copy_data_dir(src: Path, dst: Path) -> Path:
    """Copy a data directory (snapshots, raw store, runs; not the temporary files of its
    processes) for a test to change freely."""
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("refresh.lock", "tmp"))
    return dst


def replace_loads(monkeypatch: pytest.MonkeyPatch, **loads: Callable) -> None:
    """Replace registered sources' ``load`` functions for one test (the refresh reads the
    registry through ``ingest.refresh.SOURCES``): ``replace_loads(mp, mlperf=lambda ctx: None)``."""
    import dataclasses

    from ingest import refresh

    monkeypatch.setattr(refresh, "SOURCES", [
        dataclasses.replace(s, load=loads[s.name]) if s.name in loads else s
        for s in refresh.SOURCES])


def no_op(ctx: object) -> None:
    """A load that changes nothing (the source reports unchanged)."""
