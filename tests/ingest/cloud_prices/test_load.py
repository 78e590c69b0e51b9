"""The SkyPilot catalog through real refreshes: the carried samples served by the real local
HTTP server, each cloud on its own, versions, the mirror, trust checks and coverage."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import duckdb
import pytest

from ingest.cloud_prices.backfill import backfill_spec
from ingest.refresh import refresh
from tests.azure_emulator import seed_items
from tests.conftest import azure_table, make_settings, mount_azure, write_sources
from tests.helpers import REPO, Reply
from tests.ingest.cloud_prices.cases import sample, serve
from warehouse.model.schema import CloudPrice
from warehouse.storage.store import Layout

CLOUDS = ("azure", "gcp", "vast")


def mount(server, bodies: dict[str, bytes] | None = None) -> str:
    return serve(server, bodies, CLOUDS)


def sources(tmp, section: str, **tables: str):
    """A sources file with the catalog section (and ``tables``); the other sources off."""
    path = write_sources(tmp / "sources.toml", **tables)
    path.write_text(path.read_text() + section)
    return path


def snapshot(tmp) -> duckdb.DuckDBPyConnection:
    ref = Layout(tmp / "var").read_current()
    assert ref is not None
    return duckdb.connect(str(ref.path), read_only=True)


def run_record(tmp) -> dict:
    [cp] = [s for s in Layout(tmp / "var").read_runs()[-1]["sources"]
            if s["source"] == "cloud_prices"]
    return cp


@pytest.fixture
def published(tmp_path, server):
    report = refresh(make_settings(tmp_path, sources(tmp_path, mount(server))))
    assert report.status == "published", [v for v in report.validation if not v["success"]]
    return tmp_path, report


def test_every_cloud_loads_with_its_commit_and_coverage(published):
    tmp, report = published
    con = snapshot(tmp)
    counts = dict(con.execute("SELECT cloud, count(*) FROM cloud_price GROUP BY 1").fetchall())
    # azure: 44 data lines, 42 with a Price, 41 with a SpotPrice (not the K80 promo, nor the
    # two lines with no prices); gcp: 18 lines, both prices on each; vast: 13, spot 0.00 each
    assert counts == {"azure": 83, "gcp": 36, "vast": 13}
    nd = con.execute("SELECT hourly_price / accelerators, accelerator_id, catalog_commit, s.url "
                     "FROM cloud_price c JOIN source_snapshot s ON s.id = c.source_snapshot_id "
                     "WHERE instance_type = 'Standard_ND96isr_H100_v5' AND region = 'eastus2' "
                     "AND offer = 'on_demand'").fetchone()
    assert nd[0] == pytest.approx(12.29) and nd[1] == "nvidia-h100-sxm"
    assert nd[2] == "20291d7eda23e6f420cd9586558cf0bc4051851c" and nd[2] in nd[3]
    cov = report.coverage["cloud_accelerators_by_cloud"]
    # vast: 13 GPU lines, all mapped; its A100_PCIE by the 81920 MiB its GpuInfo states
    assert cov["vast"]["rows_with_accelerator"] == 13 and cov["vast"]["rows_mapped"] == 13
    assert cov["vast"]["unmapped"] == cov["vast"]["ambiguous"] == []
    assert any(line.startswith("cloud GPU rows mapped: azure ") for line in report.summary_lines())


def test_trust_checks_report_sentinels_with_samples(published):
    tmp, report = published
    by_rule = {v["expectation"]: v for v in report.validation}
    sentinels = by_rule["cloud_price: sentinels refused (kept unpriced, listed here)"]
    assert sentinels["severity"] == "warning" and sentinels["unexpected_count"] == 5
    assert by_rule["cloud_price: a refused sentinel ($0, GCP's 700.0, a GPU with no host) is never a price"]["success"]
    con = snapshot(tmp)
    assert con.execute("SELECT count(*) FROM cloud_price WHERE hourly_price = 700").fetchone() == (0,)


def test_a_malformed_cloud_publishes_nothing_of_it_and_the_others_load(tmp_path, server):
    body, _ = sample("vast")
    clouds = mount(server, {"vast": body.replace(b"17.88", b"n/a", 1)})
    report = refresh(make_settings(tmp_path, sources(tmp_path, clouds)))
    assert report.status == "partial"
    cp = run_record(tmp_path)
    assert cp["status"] == "partial"
    assert cp["stale"]["vast"].startswith("catalogs/v8/vast/vms.csv, line 4, column Price")
    clouds_loaded = snapshot(tmp_path).execute(
        "SELECT DISTINCT cloud FROM cloud_price ORDER BY 1").fetchall()
    assert clouds_loaded == [("azure",), ("gcp",)]


def _in_order(con) -> list[tuple]:
    return con.execute("SELECT instance_type, region, price_key, valid_from, hourly_price "
                       "FROM cloud_price ORDER BY rowid").fetchall()


def test_a_changed_price_opens_a_version_and_a_big_move_is_flagged(published, server):
    tmp, _ = published
    # the first load (every row in the catalog's order) was rewritten in its readers' order
    # (instance type, region, price, version), constraints and comments as created
    first = _in_order(snapshot(tmp))
    assert first == sorted(first) and len(first) == 132
    body, _ = sample("vast")
    report = refresh(make_settings(tmp, sources(tmp, mount(server, {
        "vast": body.replace(b",18.82,", b",60.00,", 1)}))))
    assert report.status == "published", report.as_dict()
    con = snapshot(tmp)
    history = con.execute("SELECT hourly_price, valid_to IS NULL FROM cloud_price WHERE "
                          "instance_type = '4x-B200-32-65536' ORDER BY valid_from").fetchall()
    assert history == [(18.82, False), (60.0, True)]
    moved = {v["expectation"]: v for v in report.validation}[
        "cloud_price: a price moved more than 3x between versions"]
    assert moved["unexpected_count"] == 1
    # one new version of 133 rows is a tail under a tenth of the table: appended, not rewritten
    after = _in_order(con)
    assert after[:-1] == first and after[-1][0] == "4x-B200-32-65536" and after[-1][4] == 60.0
    assert con.execute("SELECT constraint_column_names FROM duckdb_constraints() WHERE "
                       "table_name = 'cloud_price' AND constraint_type = 'PRIMARY KEY'"
                       ).fetchall() == [(["id"],)]
    comments = dict(con.execute("SELECT column_name, comment FROM duckdb_columns() "
                                "WHERE table_name = 'cloud_price'").fetchall())
    assert comments == {name: f.description for name, f in CloudPrice.model_fields.items()}
    assert con.execute("SELECT comment FROM duckdb_tables() WHERE table_name = 'cloud_price'"
                       ).fetchone()[0].startswith("GPU and TPU list prices of every cloud")


def test_new_rules_remap_a_catalog_the_server_answers_304_for(published, server):
    """The rules file is part of how a catalog is read: edited, it re-maps the open versions
    even when the catalog's server says the file has not changed (its bytes come from the raw
    store), and a refresh after that finds nothing new."""
    tmp, _ = published
    rule = '    instance: "H100_SXM"\n    accelerator_id: nvidia-h100-sxm'
    text = (REPO / "data" / "cloud_accelerators.yaml").read_text()
    assert text.count(rule) == 1
    edited = tmp / "rules.yaml"
    edited.write_text(text.replace(rule, rule.replace("sxm", "pcie")))
    path = sources(tmp, mount(server).replace("enabled = true", f'enabled = true\nrules = "{edited}"'))
    body, commit = sample("vast")
    before = len(server.hits(f"/{commit}/catalogs/v8/vast/vms.csv"))
    report = refresh(make_settings(tmp, path))
    assert report.status == "published", report.as_dict()
    asked = server.hits(f"/{commit}/catalogs/v8/vast/vms.csv")[before:]
    assert [h.headers.get("if-none-match") is not None for h in asked] == [True]  # a 304
    con = snapshot(tmp)
    mapped = con.execute("SELECT DISTINCT accelerator_id FROM cloud_price WHERE cloud = 'vast' "
                         "AND instance_type LIKE '%H100_SXM%' AND valid_to IS NULL").fetchall()
    assert mapped == [("nvidia-h100-pcie",)]
    assert body.count(b"H100_SXM") == 2
    assert refresh(make_settings(tmp, path)).status == "unchanged"


def test_air_gapped_refresh_reads_the_carried_samples(tmp_path, server):
    clouds = "\n[cloud_prices]\nenabled = true\n[cloud_prices.clouds]\n" + "\n".join(
        f'{c} = {{ commit = "{sample(c)[1]}", base_url = "http://127.0.0.1:9" }}' for c in CLOUDS)
    report = refresh(make_settings(tmp_path, sources(tmp_path, clouds), http_retries=0))
    assert report.status == "published", report.as_dict()
    urls = {r[0] for r in snapshot(tmp_path).execute(
        "SELECT DISTINCT url FROM source_snapshot WHERE source = 'cloud_prices'").fetchall()}
    assert len(urls) == 3 and all(u.startswith("carried copy of https://raw.githubusercontent.com/")
                                  for u in urls)


def test_backfill_versions_a_window_of_commits_in_order(tmp_path, server):
    # GitHub's commits API answer for the window (its shape: sha, commit.committer.date), newest
    # first as GitHub lists them: the sample's real commit, and before it a commit whose file
    # is the same sample with the 4x B200 price at 20.00 (made for this test).
    body, real = sample("vast")
    older = "a" * 40
    listing = [{"sha": real, "commit": {"committer": {"date": "2026-11-20T06:00:00Z"}}},
               {"sha": older, "commit": {"committer": {"date": "2026-11-10T06:00:00Z"}}}]
    server.handlers["/repos/commits"] = lambda req: Reply(200, json.dumps(listing).encode())
    server.files[f"/{real}/catalogs/v8/vast/vms.csv"] = body
    server.files[f"/{older}/catalogs/v8/vast/vms.csv"] = body.replace(b",18.82,", b",20.00,", 1)
    section = (f'\n[cloud_prices]\nenabled = true\ncommits_api = "{server.url("/repos/commits")}"'
               f'\n[cloud_prices.clouds]\nvast = {{ commit = "{older}", base_url = '
               f'"{server.url("")}" }}\n')  # the pin left behind what the backfill reads
    settings = make_settings(tmp_path, sources(tmp_path, section))
    since, until = datetime(2026, 11, 1, tzinfo=UTC), datetime(2026, 12, 1, tzinfo=UTC)
    report = refresh(settings, specs=[backfill_spec("vast", since, until, 5)])
    assert report.status == "published", report.as_dict()
    [req] = server.hits("/repos/commits")
    assert "path=catalogs%2Fv8%2Fvast%2Fvms.csv" in req.query and "per_page=6" in req.query
    history = snapshot(tmp_path).execute(
        "SELECT hourly_price, valid_from, valid_to, catalog_commit FROM cloud_price WHERE "
        "instance_type = '4x-B200-32-65536' ORDER BY valid_from").fetchall()
    nov10, nov20 = datetime(2026, 11, 10, 6, tzinfo=UTC), datetime(2026, 11, 20, 6, tzinfo=UTC)
    assert history == [(20.0, nov10, nov20, older), (18.82, nov20, None, real)]
    # an ordinary refresh then read the pin (older) again and versioned its 20.00 as a change
    # dated now: the current price reverted. It is now left unread, and said
    plain = refresh(settings)
    assert plain.status == "unchanged", plain.as_dict()
    assert any("the pinned commit aaaaaaaaaaaa is older than prices already stored (holding "
               "from 2026-11-20 06:00 UTC" in w for s in plain.sources for w in s.warnings)
    assert snapshot(tmp_path).execute(
        "SELECT hourly_price, valid_from, valid_to, catalog_commit FROM cloud_price WHERE "
        "instance_type = '4x-B200-32-65536' ORDER BY valid_from").fetchall() == history
    # a second backfill of a window under the stored history is refused, and so is a long one
    again = refresh(settings, specs=[backfill_spec("vast", since, until, 5)])
    assert again.status == "failed" and "holds its prices up to 2026-11-20" in again.message
    short = refresh(settings, specs=[backfill_spec("vast", datetime(2026, 11, 21, tzinfo=UTC),
                                                   until, 1)])
    assert "more than 1 commits changed catalogs/v8/vast/vms.csv" in short.message


def test_the_catalogs_azure_rows_are_checked_against_the_azure_api(tmp_path, server):
    # The recorded Azure API items (emulator), one with its price moved to 7.50: the catalog's
    # 6.98 for Standard_NC40ads_H100_v5 in eastus2 then disagrees (by 7 %, over the 1 % allowed);
    # ND96isr H100 v5 (98.32 both) and NC24ads A100 v4 (3.673 vs 3.67: 0.08 %) agree on demand.
    # The catalog's ND96isr spot price repeats its on-demand 98.32; the API's spot is 39.33.
    items = [{**i, "retailPrice": 7.5, "unitPrice": 7.5}
             if (i["armSkuName"], i["type"], i["skuName"]) ==
             ("Standard_NC40ads_H100_v5", "Consumption", "NC40ads H100 v5") else i
             for i in seed_items()]
    mount_azure(server, items, page_size=50)
    path = sources(tmp_path, serve(server, clouds=("azure",)), azure_prices=azure_table(server))
    report = refresh(make_settings(tmp_path, path))
    assert report.status == "published", report.as_dict()
    check = report.coverage["cloud_azure_crosscheck"]
    assert check["compared"] == 4
    commit = "20291d7eda23e6f420cd9586558cf0bc4051851c"
    assert sorted(check["disagreements"], key=lambda d: d["sku"]) == [
        {"sku": "Standard_NC40ads_H100_v5", "region": "eastus2", "offer": "on_demand",
         "catalog_price": 6.98, "azure_api_price": 7.5, "catalog_commit": commit},
        {"sku": "Standard_ND96isr_H100_v5", "region": "eastus2", "offer": "spot",
         "catalog_price": 98.32, "azure_api_price": 39.33, "catalog_commit": commit}]
    rule = {v["expectation"]: v for v in report.validation}[
        "cloud_price: the catalog's Azure on-demand and spot prices agree with the Azure API's "
        "(same SKU, region, offer, Linux, within 1%)"]
    assert (rule["severity"], rule["unexpected_count"]) == ("warning", 2)
    assert "catalog vs Azure API: 4 prices compared, 2 disagree" in report.summary_lines()


def test_every_carried_sample_loads_and_its_gpu_rows_map_or_are_listed(tmp_path, server):
    report = refresh(make_settings(tmp_path, sources(tmp_path, serve(server))))
    assert report.status == "published", report.as_dict()
    cov = report.coverage["cloud_accelerators_by_cloud"]
    assert set(cov) == {"azure", "daytona", "gcp", "hyperbolic", "lambda", "mithril", "nebius",
                        "oci", "runpod", "vast", "verda"}
    # daytona: 56 GPU lines, each with both prices (112 rows); its bare H100 (8 sizes, GpuInfo
    # 81920 MiB: SXM or PCIe) names no form factor: 16 rows ambiguous, nothing unmapped
    assert (cov["daytona"]["rows_with_accelerator"], cov["daytona"]["rows_mapped"]) == (112, 96)
    assert cov["daytona"]["ambiguous"][0] == (
        "1x-H100 (H100: nvidia-h100-nvl,nvidia-h100-pcie,nvidia-h100-sxm)")
    assert len(cov["daytona"]["ambiguous"]) == 8 and cov["daytona"]["unmapped"] == []
    # oci: 21 GPU shapes in af-casablanca-1, 4 with a spot price: 25 rows, every one mapped
    # (A10, P100 and V100 included)
    assert (cov["oci"]["rows_with_accelerator"], cov["oci"]["rows_mapped"]) == (25, 25)
    # every cloud's GPU rows, counted off the carried files (a price and a non-zero spot price
    # are a row each): azure 79, daytona 112, gcp 20 (10 TPU-slice lines with both prices, the
    # 700.0 placeholders kept as refused rows), hyperbolic 3, lambda 2, mithril 4 (one spot
    # price a line: price_is_spot), nebius 29, oci 25, runpod 6, vast 13, verda 66 = 359; all
    # mapped but daytona's 16 bare-H100 rows and azure's NV16as_v4 (half an MI25: its price
    # and spot price, 2 rows): 341 (95.0 %), never guessed
    assert (cov["azure"]["rows_mapped"], cov["azure"]["unmapped"]) == (
        77, ["Standard_NV16as_v4 (Radeon MI25)"])
    for cloud in set(cov) - {"daytona", "azure"}:
        assert cov[cloud]["unmapped"] == cov[cloud]["ambiguous"] == [], cloud
    rows = sum(c["rows_with_accelerator"] for c in cov.values())
    mapped = sum(c["rows_mapped"] for c in cov.values())
    assert (mapped, rows) == (341, 359)
