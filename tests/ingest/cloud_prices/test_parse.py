"""The SkyPilot catalog's real rows (the carried samples) parsed: columns by name, offers,
sentinels, identity, GCP's two-row pricing and malformed files."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from ingest.cloud_prices.identity import read_rules
from ingest.cloud_prices.parse import parse
from ingest.context import CURATED_DATA
from tests.ingest.cloud_prices.cases import sample
from warehouse.exceptions import ParseError

RULES = read_rules(CURATED_DATA / "cloud_accelerators.yaml")
NOW = datetime(2026, 12, 5, tzinfo=UTC)


def rows(cloud: str, body: bytes | None = None, notes: list | None = None) -> list[dict]:
    real, commit = sample(cloud)
    return list(parse(real if body is None else body, cloud=cloud, commit=commit, rules=RULES,
                      snapshot_id="s", observed_at=NOW, notes=[] if notes is None else notes))


def by(rs: list[dict], instance: str, region: str, offer: str = "on_demand") -> dict:
    [row] = [r for r in rs if (r["instance_type"], r["region"], r["offer"])
             == (instance, region, offer)]
    return row


def test_vast_columns_by_name_and_spot_zero_is_no_spot():
    rs = rows("vast")
    # 13 data lines, each with SpotPrice 0.00 ("no spot"): 13 on-demand rows, no spot row
    assert len(rs) == 13 and {r["offer"] for r in rs} == {"on_demand"}
    b200 = by(rs, "4x-B200-32-65536", ", US, NA")
    assert (b200["hourly_price"], b200["accelerators"], b200["accelerator_id"]) == \
        (18.82, 4.0, "nvidia-b200-sxm-180gb")
    assert by(rs, "1x-H100_NVL-32-65536", "Bulgaria, BG, EU")["accelerator_id"] == "nvidia-h100-nvl"
    assert by(rs, "8x-H100_SXM-32-65536", "Vietnam, VN, AS")["accelerator_id"] == "nvidia-h100-sxm"
    assert by(rs, "1x-A100_SXM4-32-65536", "Georgia, US, NA")["accelerator_id"] == "nvidia-a100-40gb"
    # A100_PCIE is 40 or 80 GB; this row's GpuInfo says 81920 MiB per GPU: the 80 GB part
    pcie = by(rs, "1x-A100_PCIE-32-65536", "Oklahoma, US, NA")
    assert (pcie["accelerator_match"], pcie["accelerator_id"]) == \
        ("mapped", "nvidia-a100-pcie-80gb")
    rtx = by(rs, "1x-RTX_5090-32-65536", "Texas, US, NA")
    assert (rtx["accelerator_match"], rtx["accelerator_id"]) == \
        ("mapped", "nvidia-geforce-rtx-5090")
    assert all(r["catalog_commit"] == "01b8cdda287814b30ff0acb49746cca19fbd4355" for r in rs)
    assert all(r["evidence"] == "list_price" for r in rs)


def test_mithril_prices_are_spot_prices_never_on_demand():
    """SkyPilot's Mithril fetcher writes the spot market's price in Price and SpotPrice alike
    (data/cloud_accelerators.yaml price_is_spot): one spot row per line, none on demand."""
    rs = rows("mithril")
    assert len(rs) == 4 and {r["offer"] for r in rs} == {"spot"}
    h100 = by(rs, "h100-80gb.sxm.8x", "us-central2-a", "spot")
    assert (h100["hourly_price"], h100["accelerators"], h100["accelerator_id"]) == \
        (8.0, 8.0, "nvidia-h100-sxm")
    # another cloud with the same two columns keeps both offers
    real, _ = sample("mithril")
    assert {r["offer"] for r in parse(real, cloud="lambda", commit="c", rules=RULES,
                                      snapshot_id="s", observed_at=NOW, notes=[])} == \
        {"on_demand", "spot"}


def test_a_count_for_when_the_catalog_gives_none_does_not_replace_one_it_gives():
    # the GB200 rule's 4 GPUs per VM apply only where the catalog is silent; Azure's ND96isr
    # H100 v5 count (the catalog's 12) is replaced by the rule's 8 whatever the catalog says
    assert RULES.match("lambda", "gpu_1x_gb200", "GB200", 1.0).count == 1.0
    assert RULES.match("shadeform", "x_GB200x8", "GB200", 8.0).count == 8.0
    assert RULES.match("oci", "BM.GPU.GB200.4", "GB200", None).count == 4.0
    assert RULES.match("azure", "Standard_ND96isr_H100_v5", "H100", 12.0).count == 8.0


def test_a_gpu_memory_rule_needs_the_memory_the_row_states():
    # the same vast row with another memory in its GpuInfo (40960 MiB), or with none: the
    # 80 GB rule no longer applies and the row is ambiguous between the two A100 PCIe sizes
    real, _ = sample("vast")
    line = next(x for x in real.splitlines() if x.startswith(b"1x-A100_PCIE-"))
    for info in (line.replace(b"81920", b"40960"), line.replace(b"'SizeInMiB': 81920", b"")):
        [row] = [r for r in rows("vast", real.replace(line, info))
                 if r["instance_type"] == "1x-A100_PCIE-32-65536"]
        assert (row["accelerator_match"], row["accelerator_candidates"]) == \
            ("ambiguous", "nvidia-a100-40gb,nvidia-a100-pcie-80gb")


def test_azure_variants_counts_and_empty_prices():
    rs = rows("azure")
    nd = by(rs, "Standard_ND96isr_H100_v5", "eastus2")
    # the catalog says 12 GPUs; the VM has 8 H100 SXM: 98.32 / 8 = 12.29 per GPU-hour
    assert (nd["catalog_count"], nd["accelerators"], nd["accelerator_id"]) == \
        (12.0, 8.0, "nvidia-h100-sxm")
    assert nd["hourly_price"] / nd["accelerators"] == pytest.approx(12.29)
    nc = by(rs, "Standard_NC40ads_H100_v5", "southcentralus", "spot")
    assert (nc["accelerator_id"], nc["hourly_price"]) == ("nvidia-h100-nvl", 8.38)
    # "Standard_NC16ads_A10_v4 … eastus" has no prices at all; the K80 promo no spot price
    assert not [r for r in rs if r["instance_type"] == "Standard_NC16ads_A10_v4"
                and r["region"] == "eastus"]
    # SkyPilot's fetch_azure joins a _Promo size to its base size's "Low Priority" price rows:
    # the promo's price is a low-priority one, never on demand
    assert [r["offer"] for r in rs if r["instance_type"] == "Standard_NC24_Promo"] == \
        ["low_priority"]
    assert by(rs, "Basic_A0", "centralus")["accelerator_match"] == "none"
    # NV16as_v4 rents half an MI25 (Microsoft Learn, NVv4-series: 1/2) where the catalog says 1;
    # only the whole-GPU NV32as_v4 maps, so it stays unmapped. The K80 promo's 4 are Azure's
    # half-card GPUs
    mi25 = by(rs, "Standard_NV16as_v4", "eastus")
    assert (mi25["accelerator_match"], mi25["accelerator_id"]) == ("unmapped", None)
    k80 = by(rs, "Standard_NC24_Promo", "southcentralus", "low_priority")
    assert (k80["accelerators"], k80["accelerator_id"]) == (4.0, "nvidia-k80")


def test_v100_and_p100_map_by_the_memory_their_gpuinfo_states():
    # OCI's GPU3 (V100) and GPU2 (P100) shapes and Verda's V100 sizes say 16384 MiB per GPU
    oci = rows("oci")
    assert {(r["accelerator_name"], r["accelerator_id"]) for r in oci
            if r["accelerator_name"] in ("V100", "P100")} == {
        ("V100", "nvidia-v100-16gb"), ("P100", "nvidia-p100-16gb")}
    assert by(rows("verda"), "8V100.48V", "FIN-03")["accelerator_id"] == "nvidia-v100-16gb"
    # the same Verda line stating 32768 MiB (a 32 GB V100) is no 16 GB part: unmapped
    real, _ = sample("verda")
    line = next(x for x in real.splitlines() if x.startswith(b"8V100.48V,"))
    v32 = by(rows("verda", real.replace(line, line.replace(b"16384", b"32768"))), "8V100.48V",
             "FIN-03")
    assert (v32["accelerator_match"], v32["accelerator_id"]) == ("unmapped", None)


def test_gcp_placeholders_refused_and_tpu_chips_counted():
    rs = rows("gcp")
    sa_east = [r for r in rs if r["region"] == "southamerica-east1"]
    assert sorted((r["offer"], r["refused"], r["hourly_price"]) for r in sa_east) == [
        ("on_demand", "placeholder_700", None), ("spot", "placeholder_700", None)]
    sa_west = {r["offer"]: r for r in rs if r["region"] == "southamerica-west1"}
    assert (sa_west["on_demand"]["hourly_price"], sa_west["spot"]["refused"]) == \
        (10.8, "placeholder_700")
    v6e = [r for r in rs if r["accelerator_name"] == "tpu-v6e-8" and r["region"] == "us-central1"
           and r["offer"] == "on_demand"]
    assert [(r["accelerator_id"], r["accelerators"], r["hourly_price"]) for r in v6e] == \
        [("google-tpu-v6e", 8.0, 21.6)]
    host = by(rs, "a3-highgpu-1g", "us-central1")  # a host row alone: no accelerator
    assert (host["accelerator_match"], host["gpu_part"]) == ("none", None)


def test_gcp_gpu_row_is_added_to_its_host():
    # The real host rows of the sample and one GPU row shaped as the catalog writes them (no
    # InstanceType; AcceleratorName and count; its own price): the GPU row goes into the host.
    body, _ = sample("gcp")
    gpu = b",,,H100,1,,us-central1,us-central1-a,9.8,2.5\n"
    rs = rows("gcp", body + gpu)
    a3 = by(rs, "a3-highgpu-1g", "us-central1")
    assert (a3["accelerator_name"], a3["accelerator_id"], a3["accelerators"]) == \
        ("H100", "nvidia-h100-sxm", 1.0)
    assert a3["published_price"] == pytest.approx(1.18251 + 9.8)
    assert a3["gpu_part"] == 9.8
    assert by(rs, "a3-highgpu-1g", "us-central1", "spot")["hourly_price"] == \
        pytest.approx(0.36117 + 2.5)
    assert not [r for r in rs if r["instance_type"] == "" and r["accelerator_name"] == "H100"]
    notes: list[str] = []
    rows("gcp", body + b",,,H100,8,,europe-west4,europe-west4-b,80.0,20.0\n", notes)
    assert notes == ["line 20: H100 x8.0 in europe-west4-b has no a3-highgpu host row"]


@pytest.mark.parametrize(("mangle", "message"), [
    (lambda b: b.replace(b"17.88", b"17,88", 1),
     "catalogs/v8/vast/vms.csv, line 4: 10 fields where the header has 9"),
    (lambda b: b.replace(b"17.88", b"n/a", 1),
     "catalogs/v8/vast/vms.csv, line 4, column Price: 'n/a' is not a price"),
    (lambda b: b.replace(b",AcceleratorCount,", b",Count,", 1),
     "catalogs/v8/vast/vms.csv, line 1: no column AcceleratorCount"),
    (lambda b: b.replace(b'16.00,0.00,"Vietnam, VN, AS"', b'16.00,0.00,"Vietnam, VN, AS', 1),
     "catalogs/v8/vast/vms.csv, line 7: malformed CSV: ',' expected after '\"' (a quoted "
     "field runs on to line 8)"),
])
def test_malformed_file_names_file_line_and_column(mangle, message):
    body, _ = sample("vast")
    with pytest.raises(ParseError) as e:
        rows("vast", mangle(body))
    assert message in str(e.value)


def test_a100_x16_on_its_megagpu_host_and_a_gpu_row_with_no_host_is_no_price():
    # Real lines of the same file (gcp/vms.csv at 006059e0): an A100 x16 GPU row beside its
    # a2-megagpu-16g host, and an L4 row (L4s run on G2 hosts SkyPilot picks at launch; the
    # file has no host row for them): a GPU's price alone is no instance's price.
    body, _ = sample("gcp")
    real = (b"a2-megagpu-16g,96.0,1360.0,,,,us-central1,us-central1-a,8.79698,4.39824\n"
            b",,,A100,16,{'Gpus': [{'MemoryInfo': {'SizeInMiB': 40960}}]},us-central1,"
            b"us-central1-a,46.94253,22.9456\n"
            b",,,L4,1,{'Gpus': [{'MemoryInfo': {'SizeInMiB': 24576}}]},asia-east1,"
            b"asia-east1-a,0.64847,0.2311\n")
    notes: list[str] = []
    rs = rows("gcp", body + real, notes)
    mega = by(rs, "a2-megagpu-16g", "us-central1")
    assert (mega["accelerator_id"], mega["accelerators"]) == ("nvidia-a100-40gb", 16.0)
    assert mega["hourly_price"] / mega["accelerators"] == pytest.approx((8.79698 + 46.94253) / 16)
    l4 = [r for r in rs if r["accelerator_name"] == "L4"]
    assert sorted((r["offer"], r["refused"], r["hourly_price"], r["published_price"])
                  for r in l4) == [("on_demand", "gpu_only", None, 0.64847),
                                   ("spot", "gpu_only", None, 0.2311)]
    assert not [r for r in rs if r["accelerator_name"] == "A100" and not r["instance_type"]]
    assert notes == ["GPU rows with no host family in gcp_hosts, a GPU's price alone and so no "
                     "instance's (refused: gpu_only): 1 L4"]
