"""A local emulator of the Azure Retail Prices API for tests and `make bench`.

Serves items in the documented response format: ``{"BillingCurrency", "CustomerEntityId",
"CustomerEntityType", "Items", "NextPageLink", "Count"}``, honouring ``$filter`` (``eq``,
``and``, ``or`` in parentheses, ``startswith``), ``$skip`` and ``currencyCode``; pages of
``page_size`` items with ``NextPageLink`` pointing back at itself. Faults are scripted per page.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl, urlencode

from tests.helpers import CASES, Reply, Request
from tools.bench_server import generate_items  # noqa: F401 - tests take it from here

_EQ = re.compile(r"^(\w+) eq '([^']*)'$")
_STARTS = re.compile(r"^startswith\((\w+), *'([^']*)'\)$")


def _split_top(expr: str, word: str) -> list[str]:
    parts, depth, start = [], 0, 0
    i = 0
    token = f" {word} "
    while i < len(expr):
        c = expr[i]
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif depth == 0 and expr.startswith(token, i):
            parts.append(expr[start:i])
            i += len(token)
            start = i
            continue
        i += 1
    parts.append(expr[start:])
    return [p.strip() for p in parts]


def matches(item: dict, expr: str) -> bool:
    """Evaluate the OData subset the ingester sends."""
    expr = expr.strip()
    ands = _split_top(expr, "and")
    if len(ands) > 1:
        return all(matches(item, a) for a in ands)
    ors = _split_top(expr, "or")
    if len(ors) > 1:
        return any(matches(item, o) for o in ors)
    if expr.startswith("(") and expr.endswith(")") and not _STARTS.match(expr):
        return matches(item, expr[1:-1])
    if m := _EQ.match(expr):
        return str(item.get(m.group(1))) == m.group(2)
    if m := _STARTS.match(expr):
        return str(item.get(m.group(1), "")).startswith(m.group(2))
    raise ValueError(f"emulator cannot read filter clause {expr!r}")


def seed_items() -> list[dict]:
    """The recorded fixture items (tests/cases/azure_prices/items.json)."""
    return json.loads((CASES / "azure_prices" / "items.json").read_text())["Items"]


@dataclass
class AzureEmulator:
    """State of the emulated API; mount with ``server.handlers[path] = emulator``."""

    items: list[dict]
    base_url: str
    page_size: int = 100
    drop_next_link_on: set[int] = field(default_factory=set)   # page numbers (1-based)
    faults: dict[int, list[Reply]] = field(default_factory=dict)  # page → replies to use first
    malformed: dict[int, dict] = field(default_factory=dict)   # page → item replacing the first
    requests: list[dict] = field(default_factory=list)
    cache_pages: bool = False  # keep each rendered page (bench: the server's own work is not ours)
    _selected: dict[tuple, list[dict]] = field(default_factory=dict)
    _rendered: dict[str, bytes] = field(default_factory=dict)

    def __call__(self, req: Request) -> Reply:
        params = dict(parse_qsl(req.query, keep_blank_values=True))
        self.requests.append(params)
        skip = int(params.get("$skip", "0"))
        page = skip // self.page_size + 1
        if self.faults.get(page):
            return self.faults[page].pop(0)
        if self.cache_pages and req.query in self._rendered:
            return Reply(200, self._rendered[req.query], {"Content-Type": "application/json"})
        key = (params.get("$filter", "serviceName eq 'Virtual Machines'"),
               params.get("currencyCode", "USD"), id(self.items), len(self.items))
        if key not in self._selected:  # filter once per query, not once per page
            self._selected[key] = [i for i in self.items if matches(i, key[0])
                                   and i["currencyCode"] == key[1]]
        selected = self._selected[key]
        chunk = [dict(i) for i in selected[skip: skip + self.page_size]]
        if page in self.malformed and chunk:
            chunk[0] = self.malformed[page]
        nxt = None
        if skip + self.page_size < len(selected) and page not in self.drop_next_link_on:
            nxt = self.base_url + "?" + urlencode({**params, "$skip": skip + self.page_size})
        body = {"BillingCurrency": "USD", "CustomerEntityId": "Default",
                "CustomerEntityType": "Retail", "Items": chunk, "NextPageLink": nxt,
                "Count": len(chunk)}
        data = json.dumps(body).encode()
        if self.cache_pages:
            self._rendered[req.query] = data
        return Reply(200, data, {"Content-Type": "application/json"})


def write_items(path: Path, items: list[dict]) -> None:
    path.write_text(json.dumps({"Items": items}))
