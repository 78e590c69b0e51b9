"""The real result files carried in tests/cases/selfmeasured (PROVENANCE.md says whose),
unpacked once per process under their names, each checked against its recorded sha256."""

from __future__ import annotations

import atexit
import gzip
import hashlib
import re
import shutil
import tempfile
from pathlib import Path

from tests.helpers import CASES

HERE = CASES / "selfmeasured"


def _recorded() -> dict[str, str]:
    """file (.gz) → sha256 of the uncompressed bytes, from PROVENANCE.md's table."""
    rows = re.findall(r"^\| (\S+\.gz) \|.*\| ([0-9a-f]{64}) \|", (HERE / "PROVENANCE.md")
                      .read_text(encoding="utf-8"), flags=re.M)
    return dict(rows)


def _unpack() -> Path:
    out = Path(tempfile.mkdtemp(prefix="perfledger-selfmeasured-"))
    atexit.register(shutil.rmtree, out, True)
    for name, sha in _recorded().items():
        body = gzip.decompress((HERE / name).read_bytes())
        if hashlib.sha256(body).hexdigest() != sha:
            raise RuntimeError(f"{name}: bytes differ from PROVENANCE.md's sha256 {sha}")
        (out / name.removesuffix(".gz")).write_bytes(body)
    return out


UNPACKED = _unpack()
VLLM = UNPACKED / "vllm_gpt-oss-120b_h100_tp8_c100.json"
SGLANG = UNPACKED / "sglang_llama_3_3_70b_online_output.jsonl"
AIPERF = UNPACKED / "aiperf_profile_export_aiperf.json"
AIPERF_V1 = UNPACKED / "aiperf_v1_profile_export_aiperf.json"
GUIDELLM = UNPACKED / "guidellm_qwen3-4b_benchmarks.json"
LLMPERF = UNPACKED / "llmperf_yi-1.5-34b_550_150_summary.json"
ALL = (VLLM, SGLANG, AIPERF, AIPERF_V1, GUIDELLM, LLMPERF)
