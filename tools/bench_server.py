"""The local HTTP server `make bench` fetches from: fixed files and an Azure Retail Prices
stand-in that pages a list of items as the real API does (``Items``, ``NextPageLink`` with
``$skip``, 100 a page), each page rendered once so its own JSON work is not timed."""

from __future__ import annotations

import gzip
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit

AZURE_PATH = "/api/retail/prices"
PAGE_SIZE = 100
REPO = Path(__file__).resolve().parent.parent
MIRROR = REPO / "ingest" / "mirror"  # the real MLPerf files the package carries
SUMMARY_CSV = "inference_results_v6.1/summary.csv.gz"
V51_JSON = "inference_results_v5.1/summary_results.json.gz"
RULES = "inference_policies/inference_rules.adoc.gz"
# The recorded Azure items the tests use too (a file read, not an import)
AZURE_ITEMS = REPO / "tests" / "cases" / "azure_prices" / "items.json"


def carried(name: str) -> bytes:
    """A real file from the package's built-in mirror, uncompressed."""
    return gzip.decompress((MIRROR / name).read_bytes())


def sources_toml(path: Path, server: BenchServer, mlperf: str) -> Path:
    """Sources for a warehouse built from ``server``: MLPerf rounds (``mlperf``, TOML pairs of
    round and URL) and the rules at ``/rules.adoc``, Azure prices from its stand-in, and the
    repository's curated files."""
    path.write_text(f"[mlperf]\nrounds = {{ {mlperf} }}\n\n"
                    f'[mlperf_rules]\nurl = "{server.url("/rules.adoc")}"\n\n'
                    f'[azure_prices]\nurl = "{server.url(AZURE_PATH)}"\n\n'
                    f'[curated]\ndir = "{REPO / "data"}"\n')
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def generate_items(n: int, start: int = 0) -> list[dict]:
    """``n`` synthetic GPU VM price items in the API's format (for scale tests and bench)."""
    skus = ["Standard_ND96isr_H100_v5", "Standard_ND96isr_H200_v5", "Standard_NC40ads_H100_v5",
            "Standard_NC24ads_A100_v4", "Standard_ND96isr_MI300X_v5"]
    out = []
    for i in range(start, start + n):
        sku = skus[i % len(skus)]
        out.append({
            "currencyCode": "USD", "tierMinimumUnits": 0.0, "retailPrice": 1.0 + (i % 997) / 10,
            "unitPrice": 1.0 + (i % 997) / 10, "armRegionName": f"region{i // len(skus) % 400}",
            "location": "Somewhere", "effectiveStartDate": "2026-01-01T00:00:00Z",
            "meterId": f"meter-{i}", "meterName": sku[9:], "productId": "p", "skuId": f"sku-{i}",
            "productName": "Virtual Machines ND Series", "skuName": sku[9:],
            "serviceName": "Virtual Machines", "serviceId": "x", "serviceFamily": "Compute",
            "unitOfMeasure": "1 Hour", "type": "Consumption", "isPrimaryMeterRegion": True,
            "armSkuName": sku})
    return out


class BenchServer:
    """``files`` (path -> bytes) and, at ``AZURE_PATH``, ``items`` paged like the real API."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.items: list[dict] = []
        self._pages: dict[str, bytes] = {}
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                body = server.answer(self.path)
                self.send_response(200 if body is not None else 404)
                self.send_header("Content-Length", str(len(body or b"")))
                self.end_headers()
                self.wfile.write(body or b"")

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.httpd.server_port}{path}"

    def serve_items(self, items: list[dict]) -> None:
        self.items, self._pages = items, {}

    def answer(self, target: str) -> bytes | None:
        parts = urlsplit(target)
        if parts.path != AZURE_PATH:
            return self.files.get(parts.path)
        page = self._pages.get(parts.query)
        if page is None:
            params = dict(parse_qsl(parts.query, keep_blank_values=True))
            skip = int(params.get("$skip", "0"))
            chunk = self.items[skip: skip + PAGE_SIZE]
            nxt = None
            if skip + PAGE_SIZE < len(self.items):
                nxt = self.url(AZURE_PATH) + "?" + urlencode({**params, "$skip": skip + PAGE_SIZE})
            page = self._pages[parts.query] = json.dumps({
                "BillingCurrency": "USD", "CustomerEntityId": "Default",
                "CustomerEntityType": "Retail", "Items": chunk, "NextPageLink": nxt,
                "Count": len(chunk)}).encode()
        return page

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
