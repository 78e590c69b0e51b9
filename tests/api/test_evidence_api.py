"""Claims, hardware, models and rules over the API."""

from __future__ import annotations


def test_cerebras_claims_carry_date_url_and_label(full_client):
    body = full_client.get("/v1/claims?vendor=Cerebras&limit=100").json()
    [c] = [r for r in body["rows"] if r["value"] == 969]
    assert c["evidence"] == "vendor_claim"
    assert c["claimed_on"] == "2024-11-18" and c["checked_on"] == "2026-10-25"
    assert c["source_url"] == "https://www.cerebras.ai/blog/llama-405b-inference"
    assert c["source_sha256"] and c["source_name"] == "curated"


def test_claims_filter_by_evidence_and_reject_unknown_label(full_client):
    rows = full_client.get("/v1/claims?evidence=paper_reported&limit=100").json()["rows"]
    assert rows and {r["evidence"] for r in rows} == {"paper_reported"}
    r = full_client.get("/v1/claims?evidence=gossip")
    assert r.status_code == 422 and r.json()["error"]["param"] == "evidence"
    assert "vendor_claim" in r.json()["error"]["message"]


def test_no_claim_is_measured(full_client):
    rows = full_client.get("/v1/claims?limit=1000").json()["rows"]
    assert len(rows) >= 25 and "measured" not in {r["evidence"] for r in rows}


def test_hardware_and_models(full_client):
    rows = full_client.get("/v1/hardware?hardware=nvidia-gb200-nvl72&metric=memory_bandwidth").json()["rows"]
    assert rows[0]["value"] == 576e12 and rows[0]["evidence"] == "vendor_spec"
    shapes = full_client.get("/v1/models?illustrative=true").json()["rows"]
    assert len(shapes) == 5 and {s["evidence"] for s in shapes} == {"assumption"}


def test_rules_served_with_line_and_document(full_client):
    rows = full_client.get("/v1/rules?model=deepseek-r1").json()["rows"]
    limits = {r["scenario"]: (r["ttft_ms"], r["tpot_ms"]) for r in rows}
    assert limits == {"Server": (2000, 80), "Interactive": (1500, 15)}
    assert all(r["evidence"] == "benchmark_rule" and r["source_sha256"] for r in rows)


def test_claim_404(full_client):
    r = full_client.get("/v1/claims/nope")
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"


def test_a_claim_shows_its_citation_and_its_source_file_side_by_side(full_client):
    """``source_url`` is the citation; ``source_snapshot_url`` is the curated file the claim
    was read from; neither hides the other, in JSON or CSV."""
    import csv
    import io

    from tests.helpers import REPO

    [c] = full_client.get("/v1/claims?vendor=Cerebras&metric=output_tokens_per_s_per_user"
                          "&limit=1000").json()["rows"][:1]
    assert c["source_url"].startswith("https://")
    assert c["source_snapshot_url"] == str(REPO / "data" / "claims.yaml")
    for path in ("/v1/claims", "/v1/hardware", "/v1/models", "/v1/rules", "/v1/results",
                 "/v1/prices"):
        text = full_client.get(f"{path}?format=csv&limit=5").text
        header = next(csv.reader(io.StringIO(text)))
        assert len(header) == len(set(header)), f"{path}: repeated column in {header}"
        assert "source_snapshot_url" in header, path
    one = full_client.get(f"/v1/claims/{c['id']}").json()
    assert one["row"]["source_url"] == c["source_url"]
    assert one["source"]["url"] == c["source_snapshot_url"]


def test_claims_and_rules_read_model_spellings_as_results_do(full_client):
    plain = full_client.get("/v1/claims?model=llama3.1-8b&limit=100").json()["rows"]
    underscored = full_client.get("/v1/claims?model=Llama3_1-8b&limit=100").json()["rows"]
    assert plain and plain == underscored
    rules = full_client.get("/v1/rules?model=DeepSeek-R1").json()["rows"]
    assert {r["model_family"] for r in rules} == {"deepseek-r1"}
