"""Which tool wrote a file, from its bytes alone: JSON or JSON Lines, then the keys.

Each tool module says what its files look like (``matches``) and reads them (``parse``); the
first that matches the file's first object reads it, and every other object of a JSONL file
must be the same tool's. A file no module matches is refused naming the tools known.
"""

from __future__ import annotations

import json
from types import ModuleType

from ingest.selfmeasured import aiperf, guidellm, llmperf, sglang, vllm
from ingest.selfmeasured.runs import Parsed
from warehouse.exceptions import ResultFileError

# Most specific first: SGLang's keys are a subset of vLLM's plus its own.
TOOLS: tuple[ModuleType, ...] = (guidellm, aiperf, llmperf, sglang, vllm)
NAMES = {"vllm": "vLLM bench serve", "sglang": "SGLang bench_serving",
         "aiperf": "AIPerf profile export", "guidellm": "GuideLLM benchmarks",
         "llmperf": "LLMPerf summary"}


def documents(file: str, body: bytes) -> list[dict]:
    """The file's JSON objects: one JSON document, or one object per non-empty line."""
    try:
        text = body.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ResultFileError(f"not UTF-8 text (byte {e.start})", file=file) from None
    try:
        whole = json.loads(text)
        docs = whole if isinstance(whole, list) else [whole]
    except ValueError:
        docs = []
        for n, line in enumerate(text.splitlines()):
            if not line.strip():
                continue
            try:
                docs.append(json.loads(line))
            except ValueError as e:
                raise ResultFileError(f"line {n + 1} is not JSON: {e}", file=file,
                                      run=len(docs)) from None
    if not docs:
        raise ResultFileError("no runs: the file is empty", file=file)
    for i, doc in enumerate(docs):
        if not isinstance(doc, dict):
            raise ResultFileError(f"a run must be a JSON object, not {type(doc).__name__}",
                                  file=file, run=i)
    return docs


def tool_of(file: str, docs: list[dict]) -> ModuleType:
    """The tool module that reads these documents."""
    for tool in TOOLS:
        if tool.matches(docs[0]):
            for i, doc in enumerate(docs[1:], start=1):
                if not tool.matches(doc):
                    raise ResultFileError(f"not a {NAMES[tool.TOOL]} run like the first",
                                          file=file, run=i)
            return tool
    keys = ", ".join(sorted(docs[0])[:8]) + (" …" if len(docs[0]) > 8 else "")
    raise ResultFileError(f"unknown tool: its keys ({keys}) are none of "
                          f"{', '.join(NAMES.values())}", file=file, run=0)


def read(file: str, body: bytes) -> Parsed:
    """Every run of a result file, or ``ResultFileError`` naming file, run and field."""
    docs = documents(file, body)
    parsed = tool_of(file, docs).parse(file, docs)
    if not parsed.runs:
        raise ResultFileError("no runs", file=file)
    return parsed
