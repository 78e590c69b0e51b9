"""The local HTTP server `make bench` fetches from: fixed files (by path, or by path and query
for an API answer), an Azure Retail Prices stand-in that pages a list of items as the real API
does (``Items``, ``NextPageLink`` with ``$skip``, 100 a page), each page rendered once so its
own JSON work is not timed, InferenceX's carried answers, and every cloud's SkyPilot catalog
file at the real files' sizes (``serve_catalog``)."""

from __future__ import annotations

import csv
import gzip
import io
import json
import socket
import threading
import tomllib
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
CATALOG_PATH = "catalogs/v8/{cloud}/vms.csv"
# Sizes of the real vms.csv files (characters; skypilot-catalog as stored by the search index,
# 2026-12): the large clouds; every other cloud's file is a few KB to 75 KB (SMALL_CATALOG).
CATALOG_CHARS = {"aws": 3_654_773, "gcp": 2_235_010, "runpod": 2_167_070, "oci": 438_300,
                 "azure": 354_241}
SMALL_CATALOG = 25_000


def carried(name: str) -> bytes:
    """A real file from the package's built-in mirror, uncompressed."""
    return gzip.decompress((MIRROR / name).read_bytes())


def sources_toml(path: Path, server: BenchServer, mlperf: str) -> Path:
    """Sources for a warehouse built from ``server``, every source on: MLPerf rounds
    (``mlperf``, TOML pairs of round and URL) and the rules at ``/rules.adoc``, Azure prices
    from its stand-in, the repository's curated files, InferenceX's carried answers (the
    repository's models) and every cloud's catalog at the commit ``server`` serves."""
    clouds = "".join(f'{c} = "{server.catalog_commit}"\n' for c in server.clouds)
    path.write_text(f"[mlperf]\nrounds = {{ {mlperf} }}\n\n"
                    f'[mlperf_rules]\nurl = "{server.url("/rules.adoc")}"\n\n'
                    f'[azure_prices]\nurl = "{server.url(AZURE_PATH)}"\n\n'
                    f'[curated]\ndir = "{REPO / "data"}"\n\n'
                    f'[inferencex]\nenabled = true\nbase_url = "{server.url("")}"\n'
                    f"models = {json.dumps(server.inferencex_models)}\nbuiltin_mirror = false\n\n"
                    f'[cloud_prices]\nenabled = true\nbase_url = "{server.url("")}"\n'
                    f"builtin_mirror = false\n[cloud_prices.clouds]\n{clouds}")
    return path


def _catalog_rows() -> dict[str, tuple[str, list[str]]]:
    """Each carried catalog sample's header and data lines (real rows, each cloud's column
    order): the templates the synthetic files repeat."""
    out = {}
    for f in sorted((MIRROR / "skypilot_catalog").glob("*.vms.csv.gz")):
        header, *lines = gzip.decompress(f.read_bytes()).decode().splitlines()
        out[f.name.split(".")[0]] = (header, lines)
    return out


def catalog_csv(cloud: str, version: int, template: tuple[str, list[str]]) -> bytes:
    """A synthetic ``vms.csv`` for ``cloud`` at the real file's size: ``template``'s real rows
    repeated in numbered regions (``-r<k>`` added to each region), and at ``version`` every
    tenth row's prices 1 % dearer per version (a newer commit moves some prices)."""
    header, lines = template
    names = header.split(",")
    price_cols = [names.index(c) for c in ("Price", "SpotPrice") if c in names]
    region = names.index("Region")
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(names)
    size, k, n = CATALOG_CHARS.get(cloud, SMALL_CATALOG), 0, 0
    rows = list(csv.reader(lines))
    while out.tell() < size:
        for row in rows:
            row = list(row)
            row[region] = f"{row[region]}-r{k}"
            if n % 10 == 0 and version:
                for c in price_cols:
                    if row[c] not in ("", "0.00", "0", "700.0"):
                        row[c] = f"{float(row[c]) * (1 + 0.01 * version):.5f}"
            w.writerow(row)
            n += 1
        k += 1
    return out.getvalue().encode()


def catalog_commit(version: int) -> str:
    """The synthetic catalog's commit of ``version`` (40 hex, as the source requires)."""
    return f"{version:040x}"


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
        self.clouds: list[str] = []
        self.catalog_commit = catalog_commit(0)
        self.inferencex_models = self._serve_inferencex()
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

    def serve_catalog(self, version: int) -> None:
        """Every cloud the source knows by default, its file at ``version``'s commit."""
        from ingest.cloud_prices.load import DEFAULT_CLOUDS
        templates = _catalog_rows()
        self.clouds, self.catalog_commit = sorted(DEFAULT_CLOUDS), catalog_commit(version)
        for cloud in self.clouds:
            # a cloud with no carried sample repeats lambda's rows (its own names map or not)
            body = catalog_csv(cloud, version, templates.get(cloud, templates["lambda"]))
            self.files[f"/{self.catalog_commit}/{CATALOG_PATH.format(cloud=cloud)}"] = body

    def _serve_inferencex(self) -> list[str]:
        """InferenceX's carried answers at the requests they answer (a list under ``rows_key``
        served bare, as the live API answers); the raw model keys of the repository's
        sources.toml."""
        for e in tomllib.loads((MIRROR / "PROVENANCE.toml").read_text())["file"]:
            if e.get("source") == "inferencex":
                body = carried(e["path"])
                if e.get("rows_key"):
                    body = json.dumps(json.loads(body)[e["rows_key"]]).encode()
                self.files[e["request"]] = body
        import yaml
        answered = {k.partition("model=")[2] for k in self.files if "model=" in k}
        return [m["key"] for m in yaml.safe_load((REPO / "data" / "inferencex.yaml").read_text())
                ["models"] if m["display"] in answered]

    def answer(self, target: str) -> bytes | None:
        parts = urlsplit(target)
        if parts.path != AZURE_PATH:
            return self.files.get(target, self.files.get(parts.path))
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
