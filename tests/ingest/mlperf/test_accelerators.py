"""Accelerator names → ids (issue #35): real spellings of MLPerf v4.0-v6.1 with the id and the
decorations each must give, decorations never changing the chip (property test), ambiguity
reported not guessed, and >= 99 % of the rows with an accelerator name mapped in each of four
real rounds (v4.1 and v6.0 from the package's built-in mirror, v5.1 and v6.1 from tests/cases/mlperf)."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import duckdb
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.mlperf.accelerators import match
from ingest.mlperf.identity import parse
from ingest.refresh import refresh
from tests.conftest import make_settings, write_sources
from tests.helpers import REPO, SUMMARY_CSV, V51_JSON

# Decorations as submitters write them (ingest.mlperf.identity strips them): each one added to
# a spelling leaves its identity unchanged.
DECORATION_EXAMPLES: dict[str, tuple[str, str]] = {
    # name: (where it goes: prefix or suffix, text)
    "reseller": ("prefix", "[MAXSUN] "),
    "virtualized": ("prefix", "Virtualized "),
    "power cap": ("suffix", " (Power Cap 1000 W)"),
    "power figure": ("suffix", "-750W"),
    "partition mode": ("suffix", "-NPS1-SPX"),
    "compute partition": ("suffix", " CPX"),
    "cooling variant": ("suffix", "-CTS"),
    "liquid cooled": ("suffix", " liquid-cooled"),
    "MaxQ": ("suffix", "_MaxQ"),
    "count marker": ("suffix", " (x87)"),
    "instances": ("suffix", " (2 instances)"),
    "registered mark": ("suffix", "(TM)"),
    "filler GPU": ("suffix", " GPU"),
    "filler Tensor Core": ("suffix", " Tensor Core GPU"),
}

CATALOGUE = yaml.safe_load((REPO / "data" / "accelerators.yaml").read_text())
SPELLINGS = {a["id"]: a["mlperf_names"] for a in CATALOGUE["accelerators"]}

# Real spellings (round where seen) → id and the decorations read from them.
REAL = [
    ("AMD Instinct MI300X-NPS1-SPX-192GB-750W", "amd-mi300x",  # v4.1
     {"power_w": 750, "partition_mode": "NPS1-SPX"}),
    ("AMD MI300X-NPS1-SPX-192GB-750W", "amd-mi300x",  # v4.1
     {"power_w": 750, "partition_mode": "NPS1-SPX"}),
    ("AMD Instinct MI300X 192GB HBM3", "amd-mi300x", {}),  # v5.1 v6.0 v6.1
    ("AMD Instinct MI325X 256GB HBM3E", "amd-mi325x", {}),  # v5.0
    ("AMD Instinct MI325X 256GB HBM3e", "amd-mi325x", {}),  # v5.1 v6.0
    ("AMD Instinct MI350X", "amd-mi350x", {}),  # v6.0
    ("AMD Instinct MI350P", "amd-mi350p", {}),  # v6.1
    ("AMD Instinct MI355X 288GB HBM3E", "amd-mi355x", {}),  # v6.0
    ("AMD Instinct MI355X 288GB HBM3e (Power Cap 1000 W)", "amd-mi355x",  # v6.0
     {"power_cap_w": 1000}),
    ("AMD Instinct MI355X 288GB HBM3e (x87)", "amd-mi355x", {"instances": "x87"}),  # v6.0
    ("AMD Instinct MI355X 288GB HBM3e (x94)", "amd-mi355x", {"instances": "x94"}),  # v6.0
    ("AMD Radeon 8060S Graphics", "amd-radeon-8060s", {"other": ["filler Graphics"]}),  # v6.1
    ("Intel(R) Arc Pro(R) B50", "intel-arc-pro-b50", {"other": ["marks (R) (R)"]}),  # v6.0
    ("Intel(R) Arc Pro(R) B60", "intel-arc-pro-b60", {"other": ["marks (R) (R)"]}),  # v6.0
    ("Intel(R) Arc Pro(R) B70", "intel-arc-pro-b70", {"other": ["marks (R) (R)"]}),  # v6.0
    ("Intel(R) Arc(TM) Pro B70", "intel-arc-pro-b70", {"other": ["marks (R) (TM)"]}),  # v6.1
    ("Intel(R) Arc(TM) 140T GPU", "intel-arc-140t",  # v5.1
     {"other": ["marks (R) (TM)", "filler GPU"]}),
    ("Intel® Gaudi® 2 AI Accelerator", "intel-gaudi2",  # v4.0
     {"other": ["marks ® ®", "filler AI Accelerator"]}),
    ("MS-Intel Arc Pro B60 Dual 48G Turbo", "intel-arc-pro-b60-dual-48gb",  # v6.0
     {"other": ["part prefix MS-"]}),
    ("[MAXSUN] MS-Intel Arc Pro B60 Dual 48G Turbo", "intel-arc-pro-b60-dual-48gb",  # v5.1
     {"other": ["reseller [MAXSUN]", "part prefix MS-"]}),
    ("NVIDIA A100-PCIe-80GB", "nvidia-a100-pcie-80gb", {}),  # v4.0
    ("NVIDIA B200-SXM-180GB", "nvidia-b200-sxm-180gb", {}),  # v4.1-v6.1
    ("Nvidia B300-SXM-270GB", "nvidia-b300-sxm-270gb", {}),  # v6.1
    ("NVIDIA GB10", "nvidia-gb10", {}),  # v6.0 v6.1
    ("NVIDIA GB200", "nvidia-gb200", {}),
    ("NVIDIA GB300", "nvidia-gb300", {}),
    ("NVIDIA GH200 Grace Hopper Superchip 144GB", "nvidia-gh200-144gb", {}),  # v4.1 v5.x
    ("NVIDIA GH200 Grace Hopper Superchip 96GB", "nvidia-gh200-96gb", {}),  # v4.1
    ("NVIDIA GeForce GTX 1650 Ti", "nvidia-geforce-gtx-1650-ti", {}),  # v6.0
    ("NVIDIA GeForce RTX 4090", "nvidia-geforce-rtx-4090", {}),
    ("NVIDIA H100 NVL", "nvidia-h100-nvl", {}),  # v4.0
    ("NVIDIA H100-NVL-94GB", "nvidia-h100-nvl", {}),  # v4.1 v5.1
    ("NVIDIA H100-PCIe-80GB", "nvidia-h100-pcie", {}),  # v4.0 v4.1
    ("NVIDIA H100-SXM-80GB", "nvidia-h100-sxm", {}),
    ("NVIDIA H200-NVL-141GB", "nvidia-h200-nvl", {}),  # v5.0-v6.0
    ("NVIDIA H200-SXM-140GB", "nvidia-h200", {}),  # v4.0 ASUSTeK (memory mistyped)
    ("NVIDIA H200-SXM-141GB", "nvidia-h200", {}),
    ("NVIDIA H200-SXM-141GB-CTS", "nvidia-h200", {"cooling": "CTS"}),  # v4.0 v4.1
    ("NVIDIA Jetson AGX Orin 64G", "nvidia-jetson-agx-orin-64gb", {}),  # v4.0 v4.1
    ("NVIDIA Jetson AGX Thor 128G", "nvidia-jetson-agx-thor", {}),
    ("NVIDIA L4", "nvidia-l4", {}),  # v4.0 v4.1
    ("NVIDIA L4-PCIe-24GB", "nvidia-l4", {}),  # v5.1 v6.0
    ("NVIDIA L40", "nvidia-l40", {}),  # v4.0
    ("NVIDIA L40S", "nvidia-l40s", {}),
    ("NVIDIA RTX 4000 Ada-PCIe-20GB", "nvidia-rtx-4000-ada", {}),  # v5.1
    ("NVIDIA RTX A5000 GPU", "nvidia-rtx-a5000", {"other": ["filler GPU"]}),  # v4.1
    ("NVIDIA RTX PRO 4500 Blackwell", "nvidia-rtx-pro-4500-blackwell", {}),
    ("NVIDIA RTX PRO 4500 Blackwell-PCIe-32GB", "nvidia-rtx-pro-4500-blackwell", {}),
    ("NVIDIA RTX PRO 4500 Blackwell Server Edition", "nvidia-rtx-pro-4500-blackwell-server", {}),
    ("NVIDIA RTX PRO 6000 Blackwell", "nvidia-rtx-pro-6000-blackwell", {}),
    ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "nvidia-rtx-pro-6000-blackwell-server", {}),
    ("NVIDIA RTX-2000E-Ada-16GB", "nvidia-rtx-2000e-ada", {}),  # v5.1
    ("NVIDIA VR200", "nvidia-vr200", {}),
    ("NVIDIA Vera Rubin", "nvidia-vera-rubin", {}),
    ("QUALCOMM Cloud AI 100 Pro", "qualcomm-cloud-ai-100-pro", {}),  # v4.0
    ("QUALCOMM Cloud AI 100 Ultra", "qualcomm-cloud-ai-100-ultra", {}),  # v4.0
    ("TPU Trillium", "google-tpu-v6e", {}),  # v5.0
    ("TPU v5e", "google-tpu-v5e", {}),  # v4.0 v4.1
    ("TPU v6", "google-tpu-v6e", {}),  # v4.1
    ("Tesla T4", "nvidia-t4", {}),  # v4.1
    ("UntetherAI speedAI240 Preview", "untetherai-speedai240-preview", {}),  # v4.1
    ("UntetherAI speedAI240 Slim", "untetherai-speedai240-slim", {}),  # v4.1
    ("Virtualized NVIDIA H100-SXM-80GB", "nvidia-h100-sxm", {"virtualized": True}),  # v5.0
    ("Virtualized NVIDIA H200-SXM-141GB", "nvidia-h200", {"virtualized": True}),  # v5.1
    ("Virtualized NVIDIA L40S", "nvidia-l40s", {"virtualized": True}),  # v4.0
]
NO_DECORATION = {"power_cap_w": None, "power_w": None, "partition_mode": None, "cooling": None,
                 "virtualized": False, "instances": None, "power_mode": None, "other": []}


@pytest.mark.parametrize("name, expected, decorations", REAL)
def test_real_spelling_maps_to_its_id_with_its_decorations(name, expected, decorations):
    assert match(name, SPELLINGS).accelerator_id == expected
    _, deco = parse(name)
    assert {k: getattr(deco, k) for k in NO_DECORATION} == {**NO_DECORATION, **decorations}


def test_decorated_names_are_matched_by_identity_not_listed():
    """The catalogue lists plain spellings; decorated ones reach their id by identity."""
    for name in ("NVIDIA H200-SXM-141GB-CTS", "AMD MI300X-NPS1-SPX-192GB-750W",
                 "AMD Instinct MI355X 288GB HBM3e (Power Cap 1000 W)", "Virtualized NVIDIA L40S"):
        assert not any(name in names for names in SPELLINGS.values())
        assert match(name, SPELLINGS).match == "identity"


@pytest.mark.parametrize("name, candidates", [
    # v4.0 writes both GH200 memory sizes the same way: the name alone cannot tell
    ("NVIDIA GH200-GraceHopper-Superchip", ("nvidia-gh200-144gb", "nvidia-gh200-96gb")),
    ("NVIDIA H100", ("nvidia-h100-nvl", "nvidia-h100-pcie", "nvidia-h100-sxm")),
    ("Virtualized NVIDIA H100 (Power Cap 500 W)",
     ("nvidia-h100-nvl", "nvidia-h100-pcie", "nvidia-h100-sxm")),
])
def test_a_name_that_fits_several_ids_is_ambiguous_never_guessed(name, candidates):
    m = match(name, SPELLINGS)
    assert m.accelerator_id is None and m.match == "ambiguous" and m.candidates == candidates


@pytest.mark.parametrize("name", ["NVIDIA Z900-SXM-512GB", "NVIDIA H200-SXM-96GB",
                                  "AMD Instinct MI400X 432GB HBM4"])
def test_a_name_that_fits_no_id_is_unmapped(name):
    assert match(name, SPELLINGS).match == "unmapped"


def test_no_two_ids_share_an_identity():
    """Else a spelling with that identity would be ambiguous between them."""
    seen: dict[tuple, str] = {}
    for acc_id, names in SPELLINGS.items():
        for name in names:
            key = parse(name)[0].exact()
            assert seen.setdefault(key, acc_id) == acc_id, (name, seen[key], acc_id)


MAPPED = sorted((n, i) for i, names in SPELLINGS.items() for n in names)


def _decorate(name: str, chosen: list[str]) -> str:
    for label in chosen:
        where, text = DECORATION_EXAMPLES[label]
        name = text + name if where == "prefix" else name + text
    return name


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(MAPPED), st.lists(st.sampled_from(sorted(DECORATION_EXAMPLES)),
                                         min_size=1, max_size=4, unique=True))
def test_a_decoration_never_changes_the_mapping(spelling, chosen):
    name, acc_id = spelling
    decorated = _decorate(name, chosen)
    assert match(decorated, SPELLINGS).accelerator_id == acc_id, decorated
    assert parse(decorated)[0] == parse(name)[0]


@given(st.sampled_from(MAPPED), st.integers(100, 2000))
def test_a_power_cap_is_read_into_its_column(spelling, watts):
    _, deco = parse(f"{spelling[0]} (Power Cap {watts} W)")
    assert deco.power_cap_w == watts


# --------------------------------------------------------------------------- real rounds

# v4.1 and v6.0: the package's built-in mirror carries them (ingest/mirror/PROVENANCE.toml)
ROUND_FILES = {"v4.1": REPO / "ingest" / "mirror" / "inference_results_v4.1" / "summary_results.json.gz",
               "v6.0": REPO / "ingest" / "mirror" / "inference_results_v6.0" / "summary_results.json.gz"}


def _unzip(src: Path, dst: Path) -> Path:
    with gzip.open(src) as f, dst.open("wb") as out:
        shutil.copyfileobj(f, out)
    return dst


@pytest.fixture(scope="module")
def four_rounds(tmp_path_factory) -> tuple[Path, dict]:
    """The curated files and four real rounds, v4.1 to v6.1, refreshed once: (tmp, report)."""
    tmp = tmp_path_factory.mktemp("four_rounds")
    paths = {r: _unzip(p, tmp / f"{r}_{p.name.removesuffix('.gz')}")
             for r, p in ROUND_FILES.items()}
    paths["v5.1"] = V51_JSON
    paths["v6.1"] = SUMMARY_CSV
    data = tmp / "data"
    shutil.copytree(REPO / "data", data)
    rounds = ", ".join(f'"{r}" = "{p}"' for r, p in sorted(paths.items()))
    sources = write_sources(tmp / "sources.toml", mlperf=f"rounds = {{ {rounds} }}",
                            curated=f'dir = "{data}"')
    report = refresh(make_settings(tmp, sources))
    assert report.status == "published", report.as_dict()
    return tmp, report.as_dict()


def _names(round_name: str) -> dict[str, int]:
    """Rows per accelerator name in the round's file, counted here from the file itself."""
    from collections import Counter

    if round_name == "v6.1":
        import csv
        with SUMMARY_CSV.open(newline="", encoding="utf-8-sig") as f:
            return Counter(r["accelerator_model_name"] for r in csv.DictReader(f))
    path = V51_JSON if round_name == "v5.1" else ROUND_FILES[round_name]
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        records = json.load(f)
    # a JSON record with a Power_Result becomes two rows (performance and power)
    return Counter(r["Accelerator"] for r in records for _ in range(1 + ("Power_Result" in r)))


@pytest.mark.parametrize("round_name", ["v4.1", "v5.1", "v6.0", "v6.1"])
def test_at_least_99_percent_of_rows_with_an_accelerator_map_in_every_round(four_rounds,
                                                                            round_name):
    _, report = four_rounds
    cov = report["coverage"]["accelerators_by_round"][round_name]
    assert cov["rows_with_accelerator"] > 0
    assert cov["rows_mapped"] / cov["rows_with_accelerator"] >= 0.99, cov
    # the counts are the file's: every row whose name is neither empty, N/A nor a mix
    from ingest.mlperf.rows import accelerator_parts
    single = sum(n for name, n in _names(round_name).items()
                 if accelerator_parts(name or None)[1] == "single")
    assert cov["rows_with_accelerator"] == single
    assert set(cov) >= {"unmapped", "ambiguous", "mapped_by_alias", "mapped_by_identity"}


def test_decorations_land_in_their_columns(four_rounds):
    tmp, _ = four_rounds
    con = duckdb.connect(str(next((tmp / "var" / "snapshots").glob("*.duckdb"))), read_only=True)
    try:
        rows = {r[0]: r[1:] for r in con.execute("""
            SELECT DISTINCT accelerator_model_name, accelerator_id, accelerator_match,
                   accelerator_power_cap_w, accelerator_power_w, accelerator_partition_mode,
                   accelerator_cooling, accelerator_virtualized, accelerator_instances
            FROM mlperf_result WHERE accelerator_model_name IN (
              'AMD Instinct MI300X-NPS1-SPX-192GB-750W', 'NVIDIA H200-SXM-141GB-CTS',
              'AMD Instinct MI355X 288GB HBM3e (Power Cap 1000 W)',
              'AMD Instinct MI355X 288GB HBM3e (x87)', 'Virtualized NVIDIA H200-SXM-141GB')
        """).fetchall()}
    finally:
        con.close()
    assert rows == {
        "AMD Instinct MI300X-NPS1-SPX-192GB-750W":
            ("amd-mi300x", "identity", None, 750, "NPS1-SPX", None, False, None),
        "NVIDIA H200-SXM-141GB-CTS": ("nvidia-h200", "identity", None, None, None, "CTS", False,
                                      None),
        "AMD Instinct MI355X 288GB HBM3e (Power Cap 1000 W)":
            ("amd-mi355x", "identity", 1000, None, None, None, False, None),
        "AMD Instinct MI355X 288GB HBM3e (x87)":
            ("amd-mi355x", "identity", None, None, None, None, False, "x87"),
        "Virtualized NVIDIA H200-SXM-141GB":
            ("nvidia-h200", "identity", None, None, None, None, True, None),
    }


def test_an_alias_added_to_the_catalogue_remaps_loaded_rows_without_refetching(four_rounds,
                                                                              tmp_path):
    """Remove a spelling: its rows are reported unmapped; put it back: they map again, while
    every round's file stays unchanged (not parsed again)."""
    from tests.helpers import copy_data_dir

    tmp, _ = four_rounds
    copy_data_dir(tmp / "var", tmp_path / "var")
    data = tmp_path / "data"
    shutil.copytree(tmp / "data", data)
    sources = tmp_path / "sources.toml"
    sources.write_text((tmp / "sources.toml").read_text().replace(str(tmp / "data"), str(data)))
    path = data / "accelerators.yaml"
    original = path.read_text()
    path.write_text(original.replace('["NVIDIA GeForce GTX 1650 Ti"]', "[]"))
    report = refresh(make_settings(tmp_path, sources)).as_dict()
    assert report["status"] == "published"
    assert report["coverage"]["accelerators_by_round"]["v6.0"]["unmapped"] == {
        "NVIDIA GeForce GTX 1650 Ti": 6}
    path.write_text(original)
    report = refresh(make_settings(tmp_path, sources)).as_dict()
    [mlperf] = [s for s in report["sources"] if s["source"] == "mlperf"]
    assert mlperf["status"] == "unchanged"
    assert {d["status"] for d in mlperf["details"].values()} == {"unchanged (same sha256)"}
    assert report["coverage"]["accelerators_by_round"]["v6.0"]["unmapped"] == {}
    assert report["coverage"]["unmapped_names"] == []


def test_mi300x_keeps_its_v41_results_and_trend_though_every_spelling_is_decorated(four_rounds):
    """v4.1's MI300X rows all carry a partition mode and a power figure: they map, and the
    round's best per accelerator is the best of both spellings."""
    tmp, _ = four_rounds
    con = duckdb.connect(str(next((tmp / "var" / "snapshots").glob("*.duckdb"))), read_only=True)
    try:
        spellings = dict(con.execute("""
            SELECT accelerator_model_name, count(*) FROM mlperf_result
            WHERE round = 'v4.1' AND accelerator_id = 'amd-mi300x' GROUP BY 1""").fetchall())
        best = dict(con.execute("""
            SELECT model_family || ':' || scenario, max(per_accelerator)
            FROM result_per_accelerator
            WHERE round = 'v4.1' AND accelerator_id = 'amd-mi300x' AND division = 'closed'
              AND availability = 'available' GROUP BY 1""").fetchall())
        trend = dict(con.execute("""
            SELECT model_family || ':' || scenario, per_accelerator FROM accelerator_trend
            WHERE round = 'v4.1' AND accelerator_id = 'amd-mi300x'""").fetchall())
    finally:
        con.close()
    assert spellings == {"AMD Instinct MI300X-NPS1-SPX-192GB-750W": 12,
                         "AMD MI300X-NPS1-SPX-192GB-750W": 4}
    assert trend and trend == pytest.approx(best)


def test_an_ambiguous_name_is_reported_and_warned_never_guessed(tmp_path):
    """v4.0 wrote both GH200 memory sizes as one name: it fits two ids."""
    record = {"ID": "9.9-1", "Submitter": "Acme", "Availability": "available",
              "Category": "closed", "Suite": "datacenter", "System": "Box", "Platform": "box",
              "UsedModel": "llama2-70b-99", "Model": "llama2-70b-99", "Scenario": "Offline",
              "Nodes": 1, "Accelerator": "NVIDIA GH200-GraceHopper-Superchip", "a#": 1,
              "version": "v9.9", "Performance_Result": 100.0, "Performance_Units": "Tokens/s"}
    path = tmp_path / "v9.9.json"
    path.write_text(json.dumps([record]))
    sources = write_sources(tmp_path / "sources.toml", mlperf=f'rounds = {{ "v9.9" = "{path}" }}',
                            curated=f'dir = "{REPO / "data"}"')
    report = refresh(make_settings(tmp_path, sources))
    assert report.status == "published"
    assert report.coverage["ambiguous_names"] == {
        "NVIDIA GH200-GraceHopper-Superchip": ["nvidia-gh200-144gb", "nvidia-gh200-96gb"]}
    cov = report.coverage["accelerators_by_round"]["v9.9"]
    assert cov["rows_ambiguous"] == 1 and cov["rows_mapped"] == 0
    # the terminal's line of coverage per round says it too
    assert "accelerator names mapped: v9.9 0/1 (1 ambiguous)" in report.summary_lines()
    [warning] = [v for v in report.validation if v["expectation"].startswith(
        "mlperf_result: no accelerator name fits several ids")]
    assert warning["severity"] == "warning" and not warning["success"]
    assert "nvidia-gh200-96gb" in warning["sample"]
