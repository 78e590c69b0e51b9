"""What a hostile source may make a fetch do: redirects only where the source allows, never
into link-local, metadata or (from a public host) private addresses; bodies bounded in size
and in inflation; upstream bytes never in the run record or a public endpoint. Real local
servers, real refreshes."""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
import zlib
from pathlib import Path

import httpx
import pytest

from ingest.http import FetchLimits, fetch_bytes, hop_refusal, make_client
from ingest.refresh import refresh
from tests.conftest import make_settings, write_sources
from tests.helpers import V51_JSON, LocalServer, Reply
from warehouse.exceptions import FetchError, FetchRefused
from warehouse.storage.store import Layout

BIN = Path(sys.executable).parent
CSV = (b"Organization,Availability,Division,SystemName,Platform,Model,Scenario,Result,Units,"
       b"version\n"
       b"Acme,available,closed,Box,box,llama2-70b-99,Offline,10.5,Tokens/s,v9.9\n"
       b"Acme,available,closed,Box,box,llama2-70b-99,Server,8.5,Tokens/s,v9.9\n")
ADMIN_CSV = CSV.replace(b"Acme", b"Evil Admin Port")


@pytest.fixture
def other_server():
    """A second real local server: another origin (another port) on 127.0.0.1."""
    s = LocalServer().start()
    yield s
    s.stop()


def redirect(to: str) -> Reply:
    return Reply(302, b"", {"Location": to})


def get(url: str, **limits) -> bytes:
    return fetch_bytes(make_client(), url, source="t", limits=FetchLimits(**limits)).body


# --------------------------------------------------------------------------- redirects


def test_a_redirect_within_the_configured_origin_is_followed(server):
    server.scripts["/old.csv"].append(redirect("/new.csv"))
    server.files["/new.csv"] = CSV
    raw = fetch_bytes(make_client(), server.url("/old.csv"), source="t")
    assert raw.body == CSV and raw.url == server.url("/new.csv")


def test_a_redirect_to_another_origin_is_refused_naming_the_hop(server, other_server):
    other_server.files["/admin.csv"] = ADMIN_CSV
    server.scripts["/r.csv"].append(redirect(other_server.url("/admin.csv?token=SECRET")))
    with pytest.raises(FetchRefused) as e:
        get(server.url("/r.csv"))
    msg = str(e.value)
    assert "\n" not in msg and e.value.retryable is False
    assert f"redirect to {other_server.url('/admin.csv?token=***')} refused" in msg
    assert f"127.0.0.1:{other_server.port} is neither the configured origin" in msg
    assert "SECRET" not in msg
    assert other_server.requests == []  # refused before it was sent
    assert len(server.hits("/r.csv")) == 1  # not retried: it would be refused again


def test_an_allowed_host_may_be_redirected_to(server, other_server):
    other_server.files["/mirror.csv"] = CSV
    for allowed in ("localhost", f"localhost:{other_server.port}"):
        server.scripts["/r.csv"].append(
            redirect(f"http://localhost:{other_server.port}/mirror.csv"))
        assert get(server.url("/r.csv"), allowed_redirect_hosts=(allowed,)) == CSV
    server.scripts["/r.csv"].append(redirect(f"http://localhost:{other_server.port}/mirror.csv"))
    with pytest.raises(FetchRefused, match="allowed_redirect_hosts"):  # another port
        get(server.url("/r.csv"), allowed_redirect_hosts=("localhost:1",))


@pytest.mark.parametrize("target, why", [
    ("http://169.254.169.254/latest/meta-data/", "link-local or cloud-metadata address"),
    ("http://[fd00:ec2::254]/latest/meta-data/", "link-local or cloud-metadata address"),
    ("http://[::ffff:169.254.169.254]/", "link-local or cloud-metadata address"),
    ("file:///etc/passwd", "file scheme (only http and https are followed)"),
    ("ftp://127.0.0.1/x", "ftp scheme"),
])
def test_metadata_addresses_and_other_schemes_are_never_followed(server, target, why):
    """Even when listed as allowed: the address and the scheme are checked on their own."""
    server.scripts["/r.csv"].append(redirect(target))
    hosts = ("169.254.169.254", "fd00:ec2::254", "::ffff:169.254.169.254", "127.0.0.1")
    with pytest.raises(FetchRefused, match=re.escape(why)):
        get(server.url("/r.csv"), allowed_redirect_hosts=hosts)


def test_a_public_host_may_not_redirect_to_a_private_or_loopback_address(server):
    """The address is what is checked, not the name: an allowed name that resolves to
    loopback is refused from a public origin. (No public server here: the first hop is
    answered at the transport, the second would be the real local server.)"""
    server.files["/admin.csv"] = ADMIN_CSV

    def public(request: httpx.Request) -> httpx.Response:
        assert request.url.host == "93.184.215.14", "the hop must not be sent"
        return httpx.Response(302, headers={"Location": f"http://localhost:{server.port}/admin.csv"})

    client = make_client(transport=httpx.MockTransport(public))
    with pytest.raises(FetchRefused, match=r"localhost is a loopback address \(127\.0\.0\.1|"
                                           r"localhost is a loopback address \(::1"):
        fetch_bytes(client, "http://93.184.215.14/summary.csv", source="t",
                    limits=FetchLimits(allowed_redirect_hosts=("localhost",)))
    assert server.requests == []
    start = httpx.URL("https://93.184.215.14/a")
    assert "private address (10.1.2.3)" in hop_refusal(start, httpx.URL("https://10.1.2.3/"),
                                                       ("10.1.2.3",))
    assert hop_refusal(start, httpx.URL("https://93.184.215.14/b")) is None


def test_a_redirect_into_an_admin_port_fails_the_source_and_publishes_nothing(
        tmp_path, server, other_server, client_for):
    other_server.files["/admin.csv"] = ADMIN_CSV
    server.scripts["/r.csv"].append(redirect(other_server.url("/admin.csv")))
    sources = write_sources(tmp_path / "sources.toml",
                            mlperf=f'rounds = {{ "v9.9" = "{server.url("/r.csv")}" }}')
    settings = make_settings(tmp_path, sources)
    report = refresh(settings)
    assert report.status == "failed" and report.snapshot_id is None
    assert f"redirect to {other_server.url('/admin.csv')} refused" in report.message
    assert other_server.requests == []
    assert client_for(settings).get("/v1/results").json()["total"] == 0


def test_allowed_redirect_hosts_is_read_from_sources_toml(tmp_path, server, other_server):
    other_server.files["/mirror.csv"] = CSV
    server.scripts["/r.csv"].append(redirect(f"http://localhost:{other_server.port}/mirror.csv"))
    sources = write_sources(tmp_path / "sources.toml",
                            mlperf=f'rounds = {{ "v9.9" = "{server.url("/r.csv")}" }}\n'
                                   'allowed_redirect_hosts = ["localhost"]')
    report = refresh(make_settings(tmp_path, sources))
    assert report.status == "published", report.message
    assert report.sources[0].rows == 2


# --------------------------------------------------------------------------- upstream bytes


def test_an_unparseable_body_is_never_quoted_in_the_record_or_the_api(tmp_path, server,
                                                                      client_for):
    """The CLI shows a short redacted excerpt; the run record, /v1/refreshes and /healthz
    carry no byte of the body."""
    good = write_sources(tmp_path / "sources.toml",
                         mlperf=f'rounds = {{ "v9.9" = "{server.url("/r.csv")}" }}')
    server.files["/r.csv"] = CSV
    settings = make_settings(tmp_path, good)
    assert refresh(settings).status == "published"
    server.files["/r.csv"] = b"internal admin page: db_password=hunter2 api_key: k3y9 go away\n"
    env = {**os.environ, "PERFLEDGER_DATA_DIR": str(tmp_path / "var"),
           "PERFLEDGER_SOURCES": str(good)}
    done = subprocess.run([BIN / "perfledger", "refresh"], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 1
    assert "mlperf v9.9: the body starts 'internal admin page: db_password=*** api_key: ***" \
        in done.stdout, done.stdout
    assert "hunter2" not in done.stdout + done.stderr and "k3y9" not in done.stdout + done.stderr
    layout = Layout(settings.data_path)
    run = layout.read_runs()[0]
    assert run["status"] == "failed"
    assert "neither a JSON list of result objects nor a summary CSV" in run["message"]
    client = client_for(settings)
    public = json.dumps([run, client.get("/v1/refreshes").json(), client.get("/healthz").json()])
    for secret in ("internal admin", "hunter2", "k3y9", "db_password"):
        assert secret not in public
    assert client.get("/v1/results").json()["total"] == 2  # the last good rows still serve


# --------------------------------------------------------------------------- bounded bodies


def gzip_of_zeros(mib: int) -> bytes:
    """``mib`` MiB of zeros, gzip-compressed (about a thousandth of that), built a MiB at a
    time so the test itself never holds the inflated body."""
    out = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = bytes(2**20)
    return b"".join([*(out.compress(chunk) for _ in range(mib)), out.flush()])


PEAK = """
import sys
from ingest.http import FetchLimits, fetch_bytes, make_client
from warehouse.exceptions import FetchRefused

def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) // 1024

before = hwm()
try:
    fetch_bytes(make_client(), sys.argv[1], source="t",
                limits=FetchLimits(max_bytes=int(sys.argv[2]) * 2**20))
    print("fetched", hwm() - before)
except FetchRefused as e:
    print("refused", hwm() - before, e)
"""


def peak_fetch(url: str, max_mb: int) -> tuple[str, int, str]:
    """Fetch ``url`` in a fresh interpreter: (outcome, growth of its peak RSS in MiB, message)."""
    done = subprocess.run([sys.executable, "-c", PEAK, url, str(max_mb)], capture_output=True,
                          text=True, timeout=120, cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 0, done.stderr
    outcome, grew, message = (done.stdout.strip().split(" ", 2) + [""])[:3]
    return outcome, int(grew), message


def test_a_gzip_bomb_is_refused_before_memory_grows(server):
    """httpx decodes one network read (64 KiB) at a time, so memory grows by at most what one
    read inflates to (zeros: about 64 MiB, twice that while zlib grows its buffer), however
    large the bomb."""
    bomb = gzip_of_zeros(512)  # 512 MiB inflated from about 500 KB
    assert len(bomb) < 2**20
    server.files.clear()
    server.handlers["/bomb.csv"] = lambda req: Reply(200, bomb, {"Content-Encoding": "gzip"})
    outcome, grew, message = peak_fetch(server.url("/bomb.csv"), max_mb=1024)  # size cap off
    assert outcome == "refused" and "inflates more than 100x" in message
    assert grew < 200, f"peak RSS grew {grew} MiB"
    outcome, grew, message = peak_fetch(server.url("/bomb.csv"), max_mb=8)
    assert outcome == "refused" and grew < 200
    assert "larger than the 8.0 MiB a body may be (max_body_mb)" in message or "inflates" in message


def test_a_huge_plain_body_stops_at_the_cap(server):
    server.handlers["/huge.csv"] = lambda req: Reply(200, CSV * 600_000)  # about 80 MiB
    outcome, grew, message = peak_fetch(server.url("/huge.csv"), max_mb=4)
    assert outcome == "refused" and "larger than the 4.0 MiB a body may be" in message
    assert grew < 40, f"peak RSS grew {grew} MiB"


def test_a_body_compressed_twice_is_refused(server):
    twice = gzip.compress(gzip.compress(CSV))
    server.handlers["/r.csv"] = lambda req: Reply(200, twice, {"Content-Encoding": "gzip, gzip"})
    with pytest.raises(FetchRefused, match="encoded 2 times over"):
        get(server.url("/r.csv"))


def test_a_real_file_gzipped_passes_the_ratio_guard(server):
    """The real v5.1 summary_results.json (2.2 MB, past the 1 MiB floor) sent gzipped
    inflates about 10x: well inside the guard."""
    body = V51_JSON.read_bytes()
    small = gzip.compress(body)
    server.handlers["/r.json"] = lambda req: Reply(200, small, {"Content-Encoding": "gzip"})
    assert len(body) > 2**20 and get(server.url("/r.json")) == body


def test_a_local_file_past_the_cap_is_refused_unread(tmp_path):
    f = tmp_path / "big.csv"
    f.write_bytes(CSV * 10_000)
    with pytest.raises(FetchRefused, match="more than the 1.0 MiB a body may be"):
        fetch_bytes(make_client(), str(f), source="t", limits=FetchLimits(max_bytes=2**20))


def test_a_source_past_its_max_body_mb_fails_and_its_last_rows_serve(tmp_path, server,
                                                                     client_for):
    server.files["/r.csv"] = CSV
    text = f'rounds = {{ "v9.9" = "{server.url("/r.csv")}" }}\nmax_body_mb = 1'
    settings = make_settings(tmp_path, write_sources(tmp_path / "sources.toml", mlperf=text))
    assert refresh(settings).status == "published"
    before = Layout(settings.data_path).read_current()
    server.files["/r.csv"] = CSV + CSV.split(b"\n", 1)[1].replace(b"Acme", b"Other") * 20_000
    report = refresh(settings)
    assert report.status == "failed"
    assert "larger than the 1.0 MiB a body may be (max_body_mb)" in report.message
    assert Layout(settings.data_path).read_current() == before
    assert client_for(settings).get("/v1/results").json()["total"] == 2


def test_growth_beyond_the_ratio_is_refused_unless_accepted(tmp_path, server):
    rows = [f"Acme,available,closed,Box{i},box{i},llama2-70b-99,Offline,10.5,Tokens/s,v9.9"
            for i in range(200)]
    header = CSV.split(b"\n", 1)[0].decode()
    server.files["/r.csv"] = "\n".join([header, *rows]).encode()
    settings = make_settings(tmp_path, write_sources(
        tmp_path / "sources.toml", mlperf=f'rounds = {{ "v9.9" = "{server.url("/r.csv")}" }}'))
    assert refresh(settings).status == "published"
    grown = [f"Acme,available,closed,Box{i},box{i},llama2-70b-99,Offline,10.5,Tokens/s,v9.9"
             for i in range(2_500)]
    server.files["/r.csv"] = "\n".join([header, *grown]).encode()
    report = refresh(settings)
    assert report.status == "failed"
    assert "2500 rows where the last good refresh had 200 (more than 10x)" in report.message
    assert "--accept-growth" in report.message
    assert refresh(settings, accept_growth=True).status == "published"


def test_fetch_errors_stay_fetch_errors():
    """FetchRefused is a FetchError (callers catching fetch failures still catch it), but not
    retryable."""
    assert issubclass(FetchRefused, FetchError) and not FetchRefused.retryable


def test_a_redirects_body_is_never_read(server):
    """A 302 that carries a gzip bomb as its body is followed without inflating it: httpx
    would read a redirect's body whole before the next hop; the client drops it unread."""
    import gzip

    from ingest.http import fetch_bytes, make_client
    from tests.helpers import Reply

    bomb = gzip.compress(b"\0" * (64 * 2**20))  # 64 MiB of zeros, ~64 KiB on the wire
    server.handlers["/moved"] = lambda r: Reply(302, bomb, {"Location": "/here",
                                                             "Content-Encoding": "gzip"})
    server.files["/here"] = b"the real file"
    seen: list[int] = []
    with make_client(5) as client:
        client.event_hooks["response"].append(
            lambda response: seen.append(len(response.read()) if response.status_code == 302
                                         else -1))
        raw = fetch_bytes(client, server.url("/moved"), source="t")
    assert raw.body == b"the real file" and raw.url == server.url("/here")
    assert seen[0] == 0  # the redirect's body, as httpx then reads it: nothing
