"""The recorded InferenceX payloads (tests/cases/inferencex, see PROVENANCE.md) and a sources
file that points the source at a local server serving them."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from tests.conftest import write_sources
from tests.helpers import CASES, REPO, LocalServer

DIR = CASES / "inferencex"
ALIASES = REPO / "data" / "inferencex.yaml"
BENCHMARKS = "/api/v1/benchmarks"
AVAILABILITY = "/api/v1/availability"


def case(name: str) -> bytes:
    """The uncompressed bytes of a recorded payload."""
    return gzip.decompress((DIR / f"{name}.json.gz").read_bytes())


def rows(name: str) -> list[dict]:
    return json.loads(case(name))


def lookup_rows() -> list[dict]:
    """The five verbatim September-2026 rows of the skills' lookup example."""
    return json.loads(case("lookup"))["sample_rows"]


def serve(server: LocalServer, benchmarks: bytes | None = None) -> None:
    """Availability and one benchmarks body on the local server (any model)."""
    server.files[AVAILABILITY] = case("availability")
    server.files[BENCHMARKS] = case("benchmarks") if benchmarks is None else benchmarks


def sources(path: Path, server: LocalServer, *, models: str = '["dsr1"]', extra: str = "",
            aliases: Path = ALIASES, **tables: str) -> Path:
    """A sources file with only InferenceX on (plus ``tables``), at the local server."""
    write_sources(path, **tables)
    with path.open("a") as f:
        f.write(inferencex_section(server, models=models, extra=extra, aliases=aliases))
    return path


def inferencex_section(server: LocalServer, *, models: str = '["dsr1"]', extra: str = "",
                       aliases: Path = ALIASES) -> str:
    """The [inferencex] table of a sources file pointing at the local server."""
    return (f'\n[inferencex]\nenabled = true\nbase_url = "{server.url("")}"\n'
            f'models = {models}\naliases = "{aliases}"\n{extra}\n')


def multinode_aggregated_row(*, disagg: bool = True) -> dict:
    """A row shaped as InferenceX's own test_multinode_aggregate_decode_fields_zero pins
    (utils/test_process_result.py, since PR #1256): one aggregated deployment on 8 GPUs run
    by the multinode runner (DISAGG true, as its fixture), 8,000 tokens/s in all and 6,000
    output, written with every GPU as prefill and decode GPUs, TP and EP as 0; figures per
    GPU as its process_result.py divides them (8,000 / 8, 6,000 / 8, 2,000 / 8). The rest is
    one lookup row's (dates, run, provenance); interactivity and latencies set so the row is
    physical (concurrency 1 x 5,000 tokens/s per user / (750 x 8 GPUs) = 0.83)."""
    row = lookup_rows()[0]
    del row["id"]
    row.update(hardware="gb200", framework="dynamo-trt", precision="fp4", disagg=disagg,
               is_multinode=True, prefill_tp=8, prefill_ep=1, prefill_dp_attention=False,
               prefill_num_workers=1, decode_tp=0, decode_ep=0, decode_dp_attention=False,
               decode_num_workers=0, num_prefill_gpu=8, num_decode_gpu=0, conc=1)
    row["metrics"] = {"tput_per_gpu": 1000.0, "output_tput_per_gpu": 750.0,
                      "input_tput_per_gpu": 250.0, "median_intvty": 5000.0,
                      "median_ttft": 0.01, "median_e2el": 0.2}
    return row
