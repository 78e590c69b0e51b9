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
