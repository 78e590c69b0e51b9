"""MLPerf Inference rules document (AsciiDoc) → ``benchmark_rule`` rows.

Reads the per-benchmark TTFT/TPOT limits from the benchmark table ("Conversational category:
TTFT/TPOT: 2000 ms/200 ms. Interactive category: TTFT/TPOT: 450 ms/40 ms."; "Server: … Interactive:
…"; or a single "TTFT/TPOT: …" meaning Server; the pair may also be written "TTFT 450 ms, TPOT
40 ms" or "TTFT of 450 ms and TPOT of 40 ms"), the reference tokens per sample where the row
gives them, and the speculative-decoding allowances table. A row that mentions TTFT/TPOT but
cannot be read is an error naming its line: limits are never guessed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ingest.http import Raw
from warehouse.exceptions import ParseError
from warehouse.model.vocabulary import Evidence, normalise_model

SOURCE = "mlperf_rules"
PARSER_VERSION = "mlperf-rules-adoc/1"

_CATEGORY = r"(?:(?P<category>Conversational category|Interactive category|Server|Interactive)\s*:\s*)?"
_SAYS = r"\s*(?:[:=]|of)?\s*"
# The phrasings a limit is written in: "TTFT/TPOT: 450 ms/40 ms", "TTFT 450 ms, TPOT 40 ms",
# "TTFT: 450ms; TPOT: 40ms", "TTFT of 450 ms and TPOT of 40 ms".
_LIMITS = (
    re.compile(_CATEGORY + r"TTFT\s*/\s*TPOT" + _SAYS
               + r"(?P<ttft>[\d.,]+)\s*ms\s*/\s*(?P<tpot>[\d.,]+)\s*ms", re.IGNORECASE),
    re.compile(_CATEGORY + r"TTFT" + _SAYS + r"(?P<ttft>[\d.,]+)\s*ms\s*[,;]?\s*(?:and\s+)?TPOT"
               + _SAYS + r"(?P<tpot>[\d.,]+)\s*ms", re.IGNORECASE),
)
# A limit is being stated (not just named, as a footnote's "(TTFT) which" does): TTFT/TPOT, or
# TTFT followed by a number.
_MENTION = re.compile(r"TTFT\s*/\s*TPOT|TTFT" + _SAYS + r"\d", re.IGNORECASE)
_TOKENS = re.compile(r"tokens_per_sample\s*=\s*(?P<n>[\d.]+)")
_CATEGORY_SCENARIO = {"conversational category": "Server", "server": "Server",
                      "interactive category": "Interactive", "interactive": "Interactive",
                      None: "Server"}


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().lstrip("|").split("|")]


def _speculative(lines: list[str]) -> dict[tuple[str, str], str]:
    """The speculative-decoding allowances of the document's appendix, per (model, scenario)."""
    speculative: dict[tuple[str, str], str] = {}
    in_spec = False
    for line in lines:
        if line.startswith("[[appendix-speculative-decoding]]"):
            in_spec = True
        elif in_spec and line.startswith("[["):
            in_spec = False
        if in_spec and line.startswith("|") and not line.startswith("|==="):
            cells = _cells(line)
            if len(cells) >= 4 and cells[0].lower() != "benchmark":
                scenario = "Interactive" if "interactive" in cells[1].lower() else cells[1]
                speculative[(normalise_model(cells[0]), scenario)] = f"{cells[2]}; {cells[3]}"
    return speculative


def parse(raw: Raw, *, snapshot_id: str) -> Iterator[dict]:
    """Yield one ``benchmark_rule`` row per (model, scenario) limit in the document."""
    try:
        text = raw.body.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ParseError(f"{SOURCE}: not UTF-8 text at byte {e.start}", source=SOURCE) from None
    lines = text.splitlines()
    speculative = _speculative(lines)
    prefix = raw.sha256[:12]
    found = 0
    for number, line in enumerate(lines, start=1):
        if not line.startswith("|") or not _MENTION.search(line):
            continue
        cells = _cells(line)
        if len(cells) < 4:
            raise ParseError(f"{SOURCE}: line {number}: a TTFT/TPOT row with {len(cells)} "
                             "cells; cannot tell which model it is for", source=SOURCE,
                             line=number)
        model = normalise_model(cells[2])
        matches = sorted((m for pattern in _LIMITS for m in pattern.finditer(line)),
                         key=lambda m: m.start())
        mentions = len(_MENTION.findall(line))
        if not matches or len(matches) != mentions:
            raise ParseError(f"{SOURCE}: line {number} ({cells[2]}): {mentions} TTFT/TPOT "
                             f"limit(s) stated but {len(matches)} readable", source=SOURCE,
                             line=number)
        tokens = _TOKENS.search(line)
        for m in matches:
            category = m.group("category")
            scenario = _CATEGORY_SCENARIO[category.lower() if category else None]
            ttft = float(m.group("ttft").replace(",", ""))
            tpot = float(m.group("tpot").replace(",", ""))
            found += 1
            yield {
                "id": f"{prefix}:{model}:{scenario}",
                "model_family": model,
                "category": category or "Server (only limit given)",
                "scenario": scenario,
                "ttft_ms": ttft,
                "tpot_ms": tpot,
                "reference_tokens": float(tokens.group("n")) if tokens else None,
                "speculative_decoding": speculative.get((model, scenario)),
                "line_number": number,
                "quote": m.group(0),
                "evidence": Evidence.benchmark_rule.value,
                "source_snapshot_id": snapshot_id,
            }
    if not found:
        raise ParseError(f"{SOURCE}: no TTFT/TPOT limits found in the document", source=SOURCE)
