"""Golden responses: a fixed list of API calls over the every-source warehouse, compared byte
for byte with the bodies recorded in tests/cases/golden/ (gzipped), so a refactor that changes
what a client receives fails here. Only what legitimately varies between builds is normalised:
snapshot and run ids, timestamps, the local server's port and the temporary directories.

Record again (after a change meant to alter responses, said so in its commit):

    PERFLEDGER_GOLDEN_RECORD=1 .venv/bin/python -m pytest tests/api/test_golden.py
"""

from __future__ import annotations

import gzip
import json
import os
import re
from pathlib import Path

import pytest

from tests.conftest import private_client
from tests.helpers import CASES, REAL_DATA, REPO

GOLDEN = CASES / "golden"
RECORD = os.environ.get("PERFLEDGER_GOLDEN_RECORD") == "1"

# Every list route: its default page and a filtered one (JSON and CSV each).
LISTS = {
    "/v1/results": "model=llama2-70b&scenario=Offline&organization=NVIDIA&limit=20",
    "/v1/ratios": "model=deepseek-r1&scenario=Interactive&limit=20",
    "/v1/costs": "model=deepseek-r1&basis=assumed&rate=10&limit=20",
    "/v1/latency-bounds": "model=deepseek-r1&scenario=Interactive&answer_tokens=1000&limit=20",
    "/v1/claim-checks": "vendor=Cerebras",
    "/v1/per-accelerator": "model=llama2-70b&scenario=Interactive&organization=AMD",
    "/v1/energy": "model=llama2-70b&scenario=Offline",
    "/v1/trends": "accelerator=nvidia-b200-sxm-180gb&model=llama2-70b&scenario=Server",
    "/v1/observations": "model=deepseek-r1&accelerator=b200&isl=8192&osl=1024&limit=20",
    "/v1/frontier?model=deepseek-r1&isl=8192&osl=1024": "accelerator=b200&interactivity=50",
    "/v1/claim-observations": "vendor=Groq",
    "/v1/claims": "vendor=Cerebras",
    "/v1/hardware": "hardware=nvidia-h100-sxm&metric=memory_bandwidth",
    "/v1/models": "limit=2",
    "/v1/rules": "model=deepseek-r1",
    "/v1/prices": "sku=Standard_ND96isr_H100_v5&region=eastus2&offer=on_demand&os=linux",
    "/v1/sources": "limit=3",
}
# Further filtered and sorted pages, other routes, items.
OTHERS = [
    "/v1/results?division=open&availability=preview&sort=-result&limit=5",
    "/v1/results?model=deepseek-r1&units=Tokens/s&min_result=1000&sort=result&offset=2&limit=5",
    "/v1/costs?basis=list_price&offer=spot&limit=10",
    "/v1/costs?model=llama2-70b&format=csv&limit=10",
    "/v1/ratios?organization=NVIDIA&format=ndjson&limit=5",
    "/v1/observations?framework=sglang&limit=5&format=csv",
    "/v1/frontier?model=deepseek-r1&isl=1024&osl=1024&limit=10&format=csv",
    "/v1/prices/history?sku=Standard_ND96isr_H100_v5&region=eastus2&offer=on_demand&os=linux",
    "/v1/accelerators",
    "/v1/accelerators/amd-mi300x",
    "/v1/claims/cerebras-llama3.1-405b-969",
    "/v1/calc/decode-bound?hardware=8x-nvidia-h100-sxm&model=illustrative-100b",
    "/v1/calc/batch?hardware=8x-nvidia-h100-sxm&model=illustrative-100b&batch=1&batch=32"
    "&sku=Standard_ND96isr_H100_v5",
    "/v1/calc/prefill?hardware=8x-nvidia-h100-sxm&model=illustrative-1t-moe",
    "/v1/calc/ridge?hardware=nvidia-h100-sxm",
    "/v1/calc/speculative?alpha=0.8&gamma=4&c=0.05",
    "/v1/calc/tensor-parallel?tp=8&tp=72",
    "/v1/calc/kv-transfer?model=illustrative-100b",
    "/v1/calc/capacity?params=405e9&precision=bf16&hardware=cerebras-wse-3",
    "/v1/calc/bandwidth-needed?active_params=32e9&tpot_ms=10",
    "/v1/calc/grid",
    "/v1/meta",
    "/healthz",
    "/readyz",
    "/v1/refreshes",
    "/v1/results?model=nope",
    "/v1/results?scenario=sideways",
    "/v1/results?limit=5000",
    "/v1/results/does-not-exist",
    "/openapi.json",
]


def calls() -> list[str]:
    out = []
    for path, filtered in LISTS.items():
        sep = "&" if "?" in path else "?"
        out += [path, f"{path}{sep}format=csv", f"{path}{sep}{filtered}",
                f"{path}{sep}{filtered}&format=csv"]
    return out + OTHERS


def normalise(body: bytes, tmp: Path) -> bytes:
    """The body with what differs between two builds of the same warehouse replaced."""
    text = body.decode("utf-8")
    for path, name in ((tmp, "<tmp>"), (REAL_DATA, "<real-data>"), (REPO, "<repo>")):
        text = text.replace(str(path), name)
    text = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:<port>", text)
    text = re.sub(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:?\d\d)?",
                  "<time>", text)
    text = re.sub(r"\b\d{8}T\d{6}(\d*)Z?(-[0-9a-f]+)?\b", "<stamp>", text)
    text = re.sub(r"\"(\w*seconds|\w*_s|age\w*|pid)\": ?[0-9.e+-]+", r'"\1": <n>', text)
    text = re.sub(r'"stages":\{[^}]*\}', '"stages":<timings>', text)
    return text.encode("utf-8")


def case_file(url: str) -> Path:
    name = re.sub(r"[^A-Za-z0-9._=-]+", "_", url.strip("/")) or "root"
    return GOLDEN / f"{name[:150]}.gz"


@pytest.fixture(scope="module")
def golden_client(all_sources_warehouse, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("golden")
    with private_client(all_sources_warehouse, tmp) as client:
        yield client, tmp, all_sources_warehouse


@pytest.mark.parametrize("url", calls())
def test_response_is_unchanged(golden_client, url):
    client, tmp, built = golden_client
    response = client.get(url)
    record = {"status": response.status_code,
              "content_type": response.headers.get("content-type"),
              "total": response.headers.get("x-total-count")}
    body = normalise(response.content, tmp)
    body = normalise(body, built)
    head = json.dumps(record, sort_keys=True).encode() + b"\n"
    path = case_file(url)
    if RECORD:
        GOLDEN.mkdir(parents=True, exist_ok=True)
        path.write_bytes(gzip.compress(head + body, mtime=0))
    assert path.exists(), f"{url}: no recorded response (PERFLEDGER_GOLDEN_RECORD=1)"
    recorded = gzip.decompress(path.read_bytes())
    want_head, _, want_body = recorded.partition(b"\n")
    assert head.rstrip(b"\n") == want_head, url
    if body != want_body:
        # show where they part, not two megabytes
        at = next((i for i, (a, b) in enumerate(zip(body, want_body, strict=False)) if a != b),
                  min(len(body), len(want_body)))
        pytest.fail(f"{url}: body differs at byte {at}: got {body[max(0, at - 200):at + 200]!r}, "
                    f"recorded {want_body[max(0, at - 200):at + 200]!r}")
