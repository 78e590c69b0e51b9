"""The shared fetch path: retries, Retry-After, conditional requests, redaction."""

from __future__ import annotations

import httpx
import pytest

from ingest.http import RetryPolicy, fetch_bytes, make_client
from warehouse.exceptions import FetchError
from warehouse.redact import redact


def scripted(*replies):
    calls = []
    queue = list(replies)

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        r = queue.pop(0) if len(queue) > 1 else queue[0]
        if isinstance(r, Exception):
            raise r
        return r

    return make_client(transport=httpx.MockTransport(handler)), calls


def test_500_then_200_is_retried():
    client, calls = scripted(httpx.Response(500), httpx.Response(200, content=b"ok"))
    slept = []
    raw = fetch_bytes(client, "https://x.test/a", source="t", policy=RetryPolicy(3, 0.1, 5),
                      sleep=slept.append)
    assert raw.body == b"ok" and raw.attempts == 2 and len(calls) == 2
    assert slept == [0.1]


def test_retry_after_is_honoured_and_capped():
    client, _ = scripted(httpx.Response(429, headers={"Retry-After": "3"}),
                         httpx.Response(429, headers={"Retry-After": "120"}),
                         httpx.Response(200, content=b"ok"))
    slept = []
    fetch_bytes(client, "https://x.test/a", source="t", policy=RetryPolicy(3, 0.1, 10),
                sleep=slept.append)
    assert slept == [3.0, 10.0]


def test_always_500_fails_with_source_url_and_attempts():
    client, calls = scripted(httpx.Response(503))
    with pytest.raises(FetchError) as e:
        fetch_bytes(client, "https://x.test/a?token=SECRET", source="mlperf",
                    policy=RetryPolicy(2, 0, 0), sleep=lambda s: None)
    assert len(calls) == 3
    msg = str(e.value)
    assert "mlperf" in msg and "HTTP 503" in msg and "3 attempt" in msg
    assert "SECRET" not in msg and "token=***" in msg


def test_connect_error_is_retried_then_reported():
    client, calls = scripted(httpx.ConnectError("refused"))
    with pytest.raises(FetchError, match="ConnectError"):
        fetch_bytes(client, "https://x.test/a", source="t", policy=RetryPolicy(1, 0, 0),
                    sleep=lambda s: None)
    assert len(calls) == 2


def test_conditional_request_and_304():
    client, calls = scripted(httpx.Response(304))
    raw = fetch_bytes(client, "https://x.test/a", source="t", etag='"abc"',
                      last_modified="Wed, 01 Jan 2026 00:00:00 GMT")
    assert raw.not_modified and raw.body == b""
    assert calls[0].headers["If-None-Match"] == '"abc"'
    assert calls[0].headers["If-Modified-Since"].startswith("Wed")
    assert calls[0].headers["User-Agent"].startswith("perfledger/")


def test_404_is_not_retried():
    client, calls = scripted(httpx.Response(404))
    with pytest.raises(FetchError, match="HTTP 404"):
        fetch_bytes(client, "https://x.test/a", source="t")
    assert len(calls) == 1


def test_local_paths_and_file_urls(tmp_path):
    f = tmp_path / "a b.csv"
    f.write_bytes(b"x,y\n")
    client = make_client()
    assert fetch_bytes(client, str(f), source="t").body == b"x,y\n"
    assert fetch_bytes(client, f.as_uri(), source="t").body == b"x,y\n"
    with pytest.raises(FetchError, match="cannot read"):
        fetch_bytes(client, str(tmp_path / "missing.csv"), source="t")


def test_redact_removes_credentials_only():
    assert redact("https://user:pw@h.test/p?sig=abc&x=1") == "https://h.test/p?sig=***&x=1"
    assert redact("https://h.test/p?currencyCode=USD&api_key=k&code=c") == \
        "https://h.test/p?currencyCode=USD&api_key=***&code=***"


def test_redirect_is_followed_and_the_final_url_recorded():
    seen = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        if request.url.path == "/old":
            return httpx.Response(302, headers={"Location": "https://x.test/new?page=2"})
        return httpx.Response(200, content=b"moved here")

    client = make_client(transport=httpx.MockTransport(handler))
    raw = fetch_bytes(client, "https://x.test/old", source="t")
    assert raw.body == b"moved here"
    assert raw.url == "https://x.test/new?page=2"
    assert seen[-1] == "https://x.test/new?page=2"


def test_compressed_body_is_decoded():
    import gzip

    text = b'{"Items": [], "Count": 0}' * 50
    client, calls = scripted(httpx.Response(200, headers={"Content-Encoding": "gzip"},
                                            content=gzip.compress(text)))
    assert fetch_bytes(client, "https://x.test/a", source="t").body == text
    assert "gzip" in calls[0].headers["Accept-Encoding"]


def test_the_clients_transport_for_the_url_is_used():
    """A mount (as a proxy setting makes one) decides where a request goes, not the default."""
    mounted = httpx.MockTransport(lambda r: httpx.Response(200, content=b"via mount"))
    default = httpx.MockTransport(lambda r: httpx.Response(200, content=b"via default"))
    client = httpx.Client(transport=default, mounts={"https://prices.test": mounted})
    assert fetch_bytes(client, "https://prices.test/p", source="t").body == b"via mount"
    assert fetch_bytes(client, "https://other.test/p", source="t").body == b"via default"


# ------------------------------------------------ the direct (httpcore) path against httpx
# ``make_client()`` sends plain GETs through httpcore; given a transport, every request goes
# through httpx. Both are run against the same real local server and must give the same Raw.
# httpx's request event hook fires only for requests httpx sends, which shows the path taken.

import gzip  # noqa: E402
import zlib  # noqa: E402

from tests.helpers import Reply  # noqa: E402


def both_paths():
    """(name, client, requests httpx sent) for the direct client and the httpx-only one."""
    out = []
    for name, client in (("direct", make_client(5)),
                         ("httpx", make_client(5, transport=httpx.HTTPTransport()))):
        sent: list[str] = []
        client.event_hooks["request"].append(lambda r, sent=sent: sent.append(str(r.url)))
        out.append((name, client, sent))
    return out


def fetch_both(url, **kwargs):
    """The Raw (or the FetchError message) each path gives, and what httpx sent for each."""
    results = {}
    for name, client, sent in both_paths():
        with client:
            try:
                raw = fetch_bytes(client, url, source="t", sleep=lambda s: None, **kwargs)
                results[name] = (raw.status, raw.body, raw.url, raw.etag, raw.last_modified,
                                 raw.attempts)
            except FetchError as e:
                results[name] = str(e)
        results[name + " via httpx"] = list(sent)
    return results


def test_a_plain_get_goes_direct_and_matches_httpx(server):
    body = b'{"Items": [1, 2], "NextPageLink": null}' * 100
    server.handlers["/p"] = lambda r: Reply(200, body, {
        "ETag": '"v1"', "Last-Modified": "Wed, 01 Jan 2026 00:00:00 GMT"})
    url = server.url("/p?api-version=2023&$filter=serviceName%20eq%20%27VM%27&$skip=100")
    got = fetch_both(url)
    assert got["direct"] == got["httpx"] == (200, body, url, '"v1"',
                                             "Wed, 01 Jan 2026 00:00:00 GMT", 1)
    assert got["direct via httpx"] == [] and got["httpx via httpx"] == [url]
    direct, via_httpx = [r for r in server.requests if r.path == "/p"]
    assert direct.query == via_httpx.query  # the same request line, byte for byte
    assert direct.headers == via_httpx.headers  # the same headers, in the same order
    assert list(direct.headers) == list(via_httpx.headers)


def test_the_direct_path_sends_conditional_headers_and_reads_304(server):
    server.files["/f"] = b"x,y\n1,2\n"
    first = fetch_both(server.url("/f"))
    etag = first["direct"][3]
    got = fetch_both(server.url("/f"), etag=etag)
    assert got["direct"] == got["httpx"] == (304, b"", server.url("/f"), etag, None, 1)
    assert got["direct via httpx"] == []


def test_the_direct_path_decodes_gzip_and_falls_back_for_other_encodings(server):
    text = b'{"Items": [], "Count": 0}' * 200
    server.handlers["/gz"] = lambda r: Reply(200, gzip.compress(text),
                                             {"Content-Encoding": "gzip"})
    squeezed = zlib.compress(text)  # "deflate" is the zlib format (RFC 9110)
    server.handlers["/deflate"] = lambda r: Reply(200, squeezed,
                                                  {"Content-Encoding": "deflate"})
    gz = fetch_both(server.url("/gz"))
    assert gz["direct"] == gz["httpx"] and gz["direct"][1] == text
    assert gz["direct via httpx"] == []
    assert server.requests[0].headers["accept-encoding"] == "gzip, deflate"
    deflated = fetch_both(server.url("/deflate"))
    assert deflated["direct"] == deflated["httpx"] and deflated["direct"][1] == text
    assert deflated["direct via httpx"] == [server.url("/deflate")]  # httpx decoded it


def test_a_body_that_is_not_the_gzip_it_claims_is_one_clear_error_on_both_paths(server):
    whole = gzip.compress(b"a" * 10_000)
    server.handlers["/bad"] = lambda r: Reply(200, b"not gzip at all",
                                              {"Content-Encoding": "gzip"})
    server.handlers["/cut"] = lambda r: Reply(200, whole[: len(whole) // 2],
                                              {"Content-Encoding": "gzip"})
    bad = fetch_both(server.url("/bad"))
    for path in ("direct", "httpx"):
        assert isinstance(bad[path], str) and bad[path].startswith(f"t: {server.url('/bad')}: ")
    assert "decode" in bad["direct"].lower()
    cut = fetch_both(server.url("/cut"))
    assert isinstance(cut["direct"], str) and "ended before its end marker" in cut["direct"]
    # httpx returns what the stream gave up to the cut; the direct path refuses it.
    assert cut["httpx"][1] == gzip.decompress(whole)[: len(cut["httpx"][1])]


def test_redirects_are_followed_on_the_direct_path_and_the_final_url_recorded(server):
    server.handlers["/old"] = lambda r: Reply(302, b"moved", {"Location": "/new?page=2"})
    server.handlers["/abs"] = lambda r: Reply(301, b"", {"Location": server.url("/new?page=3")})
    server.handlers["/new"] = lambda r: Reply(200, b"here " + r.query.encode())
    server.handlers["/odd"] = lambda r: Reply(307, b"", {"Location": "/new?q=a b"})
    server.handlers["/loop"] = lambda r: Reply(302, b"", {"Location": "/loop"})
    rel = fetch_both(server.url("/old"))
    assert rel["direct"] == rel["httpx"] == (200, b"here page=2", server.url("/new?page=2"),
                                             None, None, 1)
    assert rel["direct via httpx"] == []
    absolute = fetch_both(server.url("/abs"))
    assert absolute["direct"] == absolute["httpx"]
    assert absolute["direct"][:3] == (200, b"here page=3", server.url("/new?page=3"))
    # a Location httpx would escape (a space) is sent by httpx, from the start
    odd = fetch_both(server.url("/odd"))
    assert odd["direct"] == odd["httpx"] and odd["direct"][1] == b"here q=a%20b"
    assert odd["direct via httpx"] == [server.url("/odd"), server.url("/new?q=a%20b")]
    loop = fetch_both(server.url("/loop"), policy=RetryPolicy(3, 0, 0))
    for path in ("direct", "httpx"):
        assert "redirect" in loop[path].lower() and "1 attempt" not in loop[path]
    assert len(server.hits("/loop")) == 2 * 21  # 1 + 20 redirects each, never retried


def test_retries_on_the_direct_path_match_httpx(server):
    for _ in ("direct", "httpx"):  # one script per path
        server.scripts["/r"].extend([
            Reply(503, b"busy"),
            Reply(429, b"slow down", {"Retry-After": "2"}),
            Reply(200, b"abcdef" * 1000, truncate=100),  # the connection drops mid-body
            Reply(200, b"finally")])
    slept = {}
    for name, client, sent in both_paths():
        waits: list[float] = []
        with client:
            raw = fetch_bytes(client, server.url("/r"), source="t", sleep=waits.append,
                              policy=RetryPolicy(3, 0.25, 10))
        slept[name] = (raw.body, raw.attempts, waits, len(sent))
    assert slept["direct"][:3] == slept["httpx"][:3] == (b"finally", 4, [0.25, 2.0, 1.0])
    assert slept["direct"][3] == 0 and slept["httpx"][3] == 4


def test_failures_on_the_direct_path_name_the_source_and_hide_secrets(server):
    server.handlers["/s"] = lambda r: Reply(503, b"down")
    url = server.url("/s?currencyCode=USD&sig=SECRET123")
    got = fetch_both(url, policy=RetryPolicy(1, 0, 0))
    assert got["direct"] == got["httpx"]
    assert "HTTP 503 after 2 attempt(s)" in got["direct"]
    assert "SECRET123" not in got["direct"] and "sig=***" in got["direct"]
    assert got["direct via httpx"] == []

    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    refused = fetch_both(f"http://127.0.0.1:{port}/x?token=SECRET123",
                         policy=RetryPolicy(1, 0, 0))
    for path in ("direct", "httpx"):
        assert "failed after 2 attempt(s): ConnectError" in refused[path]
        assert "SECRET123" not in refused[path]


def test_a_proxy_in_the_environment_sends_everything_through_httpx(server, monkeypatch):
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # a proxy nothing answers on
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")  # ... which httpx is told to bypass here
    server.files["/f"] = b"via httpx"
    client = make_client(5)
    sent: list[str] = []
    client.event_hooks["request"].append(lambda r: sent.append(str(r.url)))
    with client:
        assert client.direct is False
        assert fetch_bytes(client, server.url("/f"), source="t").body == b"via httpx"
    assert sent == [server.url("/f")]


@pytest.mark.parametrize("url", [
    "https://prices.azure.com:443/api/retail/prices?$skip=100",
    "https://prices.azure.com:443", "http://h.test:80?x=1", "http://h.test:8080/p",
    "https://h.test:4430/p", "http://h.test:443/p", "https://h.test/p:443",
    "https://h.test/p?next=https://other.test:443/q"])
def test_a_direct_url_is_recorded_as_httpx_records_it(url):
    from ingest.http import _PLAIN_URL, _recorded_url

    assert _PLAIN_URL.match(url)
    assert _recorded_url(url) == str(httpx.URL(url))


def test_the_command_line_does_not_load_httpxs_own_command_line_tool():
    """``ingest`` marks httpx's optional CLI module absent (it loads rich, pygments and click:
    a tenth of a no-change refresh); httpx works as without its ``cli`` extra."""
    import subprocess
    import sys

    code = ("import sys, cli.main, httpx\n"
            "print(sorted(m for m in ('httpx._main', 'rich', 'pygments', 'click')"
            " if sys.modules.get(m)))\n"
            "print(httpx.Client().headers['accept-encoding'])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert out == ["[]", "gzip, deflate"]
