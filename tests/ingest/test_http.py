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


# ------------------------------------------------ against a real local server
# ``make_client()`` is a plain ``httpx.Client``: every request below goes through httpx's own
# transport to a real socket, and its request event hook sees each one (redirect hops included).

import gzip  # noqa: E402
import socket  # noqa: E402
import zlib  # noqa: E402

from tests.helpers import Reply  # noqa: E402


def fetch(url, **kwargs):
    """(status, body, url, etag, last_modified, attempts) or the FetchError message, and the
    URLs httpx sent."""
    sent: list[str] = []
    with make_client(5) as client:
        client.event_hooks["request"].append(lambda r: sent.append(str(r.url)))
        try:
            raw = fetch_bytes(client, url, source="t", sleep=lambda s: None, **kwargs)
            got = (raw.status, raw.body, raw.url, raw.etag, raw.last_modified, raw.attempts)
        except FetchError as e:
            got = str(e)
    return got, sent


def test_a_get_sends_httpx_headers_and_keeps_the_url_as_given(server):
    body = b'{"Items": [1, 2], "NextPageLink": null}' * 100
    server.handlers["/p"] = lambda r: Reply(200, body, {
        "ETag": '"v1"', "Last-Modified": "Wed, 01 Jan 2026 00:00:00 GMT"})
    url = server.url("/p?api-version=2023&$filter=serviceName%20eq%20%27VM%27&$skip=100")
    got, sent = fetch(url)
    assert got == (200, body, url, '"v1"', "Wed, 01 Jan 2026 00:00:00 GMT", 1)
    assert sent == [url]
    (req,) = server.hits("/p")
    assert req.headers["user-agent"].startswith("perfledger/")
    assert req.headers["accept-encoding"] == "gzip, deflate"


def test_conditional_headers_are_sent_and_a_304_read(server):
    server.files["/f"] = b"x,y\n1,2\n"
    first, _ = fetch(server.url("/f"))
    etag = first[3]
    got, _ = fetch(server.url("/f"), etag=etag)
    assert got == (304, b"", server.url("/f"), etag, None, 1)
    assert server.hits("/f")[-1].headers["if-none-match"] == etag


def test_gzip_and_deflate_bodies_are_decoded(server):
    text = b'{"Items": [], "Count": 0}' * 200
    server.handlers["/gz"] = lambda r: Reply(200, gzip.compress(text), {"Content-Encoding": "gzip"})
    server.handlers["/deflate"] = lambda r: Reply(200, zlib.compress(text),
                                                  {"Content-Encoding": "deflate"})
    assert fetch(server.url("/gz"))[0][1] == text
    assert fetch(server.url("/deflate"))[0][1] == text


def test_a_body_that_is_not_the_gzip_it_claims_is_one_clear_error(server):
    server.handlers["/bad"] = lambda r: Reply(200, b"not gzip at all", {"Content-Encoding": "gzip"})
    bad, _ = fetch(server.url("/bad"))
    assert isinstance(bad, str) and bad.startswith(f"t: {server.url('/bad')}: ")
    assert "decompress" in bad.lower()


def test_redirects_are_followed_and_the_final_url_recorded(server):
    server.handlers["/old"] = lambda r: Reply(302, b"moved", {"Location": "/new?page=2"})
    server.handlers["/abs"] = lambda r: Reply(301, b"", {"Location": server.url("/new?page=3")})
    server.handlers["/new"] = lambda r: Reply(200, b"here " + r.query.encode())
    server.handlers["/odd"] = lambda r: Reply(307, b"", {"Location": "/new?q=a b"})
    server.handlers["/loop"] = lambda r: Reply(302, b"", {"Location": "/loop"})
    rel, sent = fetch(server.url("/old"))
    assert rel == (200, b"here page=2", server.url("/new?page=2"), None, None, 1)
    assert sent == [server.url("/old"), server.url("/new?page=2")]
    assert fetch(server.url("/abs"))[0][:3] == (200, b"here page=3", server.url("/new?page=3"))
    assert fetch(server.url("/odd"))[0][1] == b"here q=a%20b"  # httpx escaped the space
    loop, _ = fetch(server.url("/loop"), policy=RetryPolicy(3, 0, 0))
    assert "redirect" in loop.lower() and "1 attempt" not in loop
    assert len(server.hits("/loop")) == 21  # 1 + 20 redirects (httpx's limit), never retried


def test_retries_on_a_real_socket(server):
    server.scripts["/r"].extend([
        Reply(503, b"busy"),
        Reply(429, b"slow down", {"Retry-After": "2"}),
        Reply(200, b"abcdef" * 1000, truncate=100),  # the connection drops mid-body
        Reply(200, b"finally")])
    waits: list[float] = []
    with make_client(5) as client:
        raw = fetch_bytes(client, server.url("/r"), source="t", sleep=waits.append,
                          policy=RetryPolicy(3, 0.25, 10))
    assert (raw.body, raw.attempts, waits) == (b"finally", 4, [0.25, 2.0, 1.0])


def test_failures_name_the_source_and_hide_secrets(server):
    server.handlers["/s"] = lambda r: Reply(503, b"down")
    got, _ = fetch(server.url("/s?currencyCode=USD&sig=SECRET123"), policy=RetryPolicy(1, 0, 0))
    assert "HTTP 503 after 2 attempt(s)" in got
    assert "SECRET123" not in got and "sig=***" in got
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    refused, _ = fetch(f"http://127.0.0.1:{port}/x?token=SECRET123", policy=RetryPolicy(1, 0, 0))
    assert "failed after 2 attempt(s): ConnectError" in refused
    assert "SECRET123" not in refused


def test_a_proxy_in_the_environment_is_honoured_by_httpx(server, monkeypatch):
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # a proxy nothing answers on
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")  # ... which httpx is told to bypass here
    server.files["/f"] = b"via httpx"
    assert fetch(server.url("/f"))[0][1] == b"via httpx"
