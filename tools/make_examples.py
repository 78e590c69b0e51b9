"""Record one real example response per endpoint into api/examples.json (shown in OpenAPI).

    .venv/bin/python -m tools.make_examples

Builds a warehouse from the real v5.1 JSON and v6.1 CSV and the rules (the package's built-in
mirror), the curated files and the recorded Azure items, then calls each endpoint once. Rerun it when an endpoint changes;
tests/api/test_openapi.py fails when an endpoint has no example.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from fastapi.testclient import TestClient

from api.app import create_app
from ingest.refresh import refresh
from tools.bench_server import (
    AZURE_ITEMS,
    REPO,
    RULES,
    SUMMARY_CSV,
    V51_JSON,
    BenchServer,
    carried,
    sources_toml,
)
from warehouse.settings import Settings

CALLS = {
    "/v1/results": "/v1/results?model=deepseek-r1&scenario=Interactive&system=GB200&limit=1",
    "/v1/results/{result_id}": "/v1/results/{result_id}",
    "/v1/ratios": "/v1/ratios?model=deepseek-r1&scenario=Interactive&organization=NVIDIA&limit=1",
    "/v1/costs": "/v1/costs?model=deepseek-r1&scenario=Interactive&basis=assumed&rate=10&limit=1",
    "/v1/latency-bounds": "/v1/latency-bounds?model=deepseek-r1&scenario=Interactive&limit=1"
                          "&answer_tokens=1000",
    "/v1/claim-checks": "/v1/claim-checks?vendor=Cerebras&limit=1",
    "/v1/observations": "/v1/observations?model=deepseek-r1&accelerator=b200&isl=8192&osl=1024"
                        "&limit=1",
    "/v1/claim-observations": "/v1/claim-observations?vendor=Groq&limit=1",
    "/v1/frontier": "/v1/frontier?model=deepseek-r1&accelerator=b200&isl=8192&osl=1024"
                    "&interactivity=50&limit=2",
    "/v1/per-accelerator": "/v1/per-accelerator?model=llama2-70b&scenario=Interactive"
                           "&organization=AMD&limit=1",
    "/v1/energy": "/v1/energy?model=llama2-70b&scenario=Offline&limit=1",
    "/v1/trends": "/v1/trends?accelerator=nvidia-b200-sxm-180gb&model=llama2-70b"
                  "&scenario=Server&limit=2",
    "/v1/claims": "/v1/claims?vendor=Cerebras&limit=1",
    "/v1/claims/{claim_id}": "/v1/claims/cerebras-llama3.1-405b-969",
    "/v1/hardware": "/v1/hardware?hardware=nvidia-h100-sxm&metric=memory_bandwidth",
    "/v1/models": "/v1/models?limit=1",
    "/v1/rules": "/v1/rules?model=deepseek-r1&limit=1",
    "/v1/prices": "/v1/prices?sku=Standard_ND96isr_H100_v5&region=eastus2&offer=on_demand&os=linux",
    "/v1/prices/history": "/v1/prices/history?sku=Standard_ND96isr_H100_v5&region=eastus2"
                          "&offer=on_demand&os=linux",
    "/v1/accelerators": "/v1/accelerators",
    "/v1/accelerators/{accelerator_id}": "/v1/accelerators/amd-mi300x",
    "/v1/calc/decode-bound": "/v1/calc/decode-bound?hardware=8x-nvidia-h100-sxm&model=illustrative-100b",
    "/v1/calc/batch": "/v1/calc/batch?hardware=8x-nvidia-h100-sxm&model=illustrative-100b&batch=1"
                      "&batch=32&sku=Standard_ND96isr_H100_v5",
    "/v1/calc/prefill": "/v1/calc/prefill?hardware=8x-nvidia-h100-sxm&model=illustrative-1t-moe",
    "/v1/calc/ridge": "/v1/calc/ridge?hardware=nvidia-h100-sxm",
    "/v1/calc/speculative": "/v1/calc/speculative?alpha=0.8&gamma=4&c=0.05",
    "/v1/calc/tensor-parallel": "/v1/calc/tensor-parallel?tp=8&tp=72",
    "/v1/calc/kv-transfer": "/v1/calc/kv-transfer?model=illustrative-100b",
    "/v1/calc/capacity": "/v1/calc/capacity?params=405e9&precision=bf16&hardware=cerebras-wse-3",
    "/v1/calc/bandwidth-needed": "/v1/calc/bandwidth-needed?active_params=32e9&tpot_ms=10",
    "/v1/calc/grid": "/v1/calc/grid",
    "/v1/sources": "/v1/sources?limit=1",
    "/v1/sources/{snapshot_id}": "/v1/sources/{snapshot_id}",
    "/v1/refreshes": "/v1/refreshes?limit=1",
    "/v1/refreshes/{run_id}/validation": "/v1/refreshes/{run_id}/validation",
    "/healthz": "/healthz",
    "/readyz": "/readyz",
    "/v1/meta": "/v1/meta",
}


def _trim(value: object) -> object:
    if isinstance(value, list):
        return [_trim(v) for v in value[:2]]
    if isinstance(value, dict):
        return {k: _trim(v) for k, v in value.items()}
    if isinstance(value, str) and len(value) > 160:
        return value[:157] + "..."
    return value


def main() -> None:
    server = BenchServer()
    try:
        for path, name in (("/v5.1.json", V51_JSON), ("/v6.1.csv", SUMMARY_CSV),
                           ("/rules.adoc", RULES)):
            server.files[path] = carried(name)
        server.serve_items(json.loads(AZURE_ITEMS.read_text())["Items"])
        tmp = Path(tempfile.mkdtemp(prefix="perfledger-examples-"))
        rounds = (f'"v5.1" = "{server.url("/v5.1.json")}", '
                  f'"v6.1" = "{server.url("/v6.1.csv")}"')
        sources = sources_toml(tmp / "sources.toml", server, rounds)
        settings = Settings(data_dir=tmp / "var", sources=sources)
        report = refresh(settings)
        assert report.status == "published", report.message
        client = TestClient(create_app(settings))
        ids = {
            "result_id": client.get(CALLS["/v1/results"]).json()["rows"][0]["id"],
            "snapshot_id": client.get("/v1/sources?limit=1").json()["rows"][0]["id"],
            "run_id": client.get("/v1/refreshes?limit=1").json()["rows"][0]["id"],
        }
        out = {}
        for path, url in CALLS.items():
            response = client.get(url.format(**ids))
            assert response.status_code == 200, (url, response.text)
            out[path] = _trim(response.json())
        # curated files named from the checkout they were read in: named from the repository
        # instead, so the document is the same wherever it is built or served
        text = json.dumps(out, indent=1, default=str).replace(f"{REPO}/", "")
        (REPO / "api" / "examples.json").write_text(text + "\n")
        print(f"recorded {len(out)} examples")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
