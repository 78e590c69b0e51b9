"""Curated files and rules through a refresh: a bad file publishes nothing new."""

from __future__ import annotations

import shutil

import yaml

from ingest.refresh import refresh
from tests.conftest import full_sources, make_settings
from tests.helpers import REPO
from warehouse.storage.store import Layout


def test_bad_claims_file_publishes_nothing_new(full_copy, client_for, tmp_path):
    tmp, _ = full_copy
    data = tmp / "data"
    shutil.copytree(REPO / "data", data)
    doc = yaml.safe_load((data / "claims.yaml").read_text())
    doc["claims"][0]["evidence"] = "measured"
    (data / "claims.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    settings = make_settings(tmp, full_sources(tmp / "sources.toml", curated=f'dir = "{data}"'))
    client = client_for(settings)
    before = client.get("/v1/claims?limit=1000").json()
    current = Layout(settings.data_path).read_current()

    report = refresh(settings)

    assert report.exit_code == 1
    [cur] = [s for s in report.sources if s.source == "curated"]
    assert cur.status == "failed"
    assert "claims.yaml: claims[0] (id nvidia-gb200-nvl72-30x-realtime).evidence" in cur.message
    assert Layout(settings.data_path).read_current() == current
    assert client.get("/v1/claims?limit=1000").json() == before


def test_edited_claim_is_published_with_new_source_bytes(full_copy, client_for):
    tmp, _ = full_copy
    data = tmp / "data"
    shutil.copytree(REPO / "data", data)
    text = (data / "claims.yaml").read_text().replace("value: 969\n", "value: 970\n")
    (data / "claims.yaml").write_text(text)
    settings = make_settings(tmp, full_sources(tmp / "sources.toml", curated=f'dir = "{data}"'))
    report = refresh(settings)
    assert report.status == "published", report.message
    row = client_for(settings).get("/v1/claims/cerebras-llama3.1-405b-969").json()
    assert row["row"]["value"] == 970
    import hashlib
    assert row["source"]["sha256"] == hashlib.sha256(text.encode()).hexdigest()


def test_refresh_reports_alias_coverage(full_warehouse):
    runs = Layout(full_warehouse / "var").read_runs()
    coverage = runs[-1]["coverage"]
    assert coverage["rows_with_accelerator"] == coverage["rows_mapped"] == 449
    assert coverage["unmapped_names"] == []


def test_a_copied_sources_file_still_reads_the_checkouts_curated_files(tmp_path):
    """The repository's [curated] section names no directory: a copy of the sources file in
    another directory reads the checkout's own data/ (not a data/ beside the copy)."""
    from ingest.refresh import refresh
    from tests.conftest import make_settings
    from tests.helpers import REPO

    text = (REPO / "sources.toml").read_text()
    curated = text[text.index("[curated]"):].split("\n[", 1)[0]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    copy = elsewhere / "sources.toml"
    copy.write_text("[mlperf]\nenabled = false\n[mlperf_rules]\nenabled = false\n"
                    "[azure_prices]\nenabled = false\n[inferencex]\nenabled = false\n"
                    + curated + "\n")
    report = refresh(make_settings(tmp_path, copy))
    assert report.status == "published", report.as_dict()
    curated_outcome = next(s for s in report.sources if s.source == "curated")
    assert curated_outcome.status == "updated" and curated_outcome.rows > 0
    assert not (elsewhere / "data").exists()
