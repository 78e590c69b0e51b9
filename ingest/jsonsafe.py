"""Strict JSON for every source: what Python's ``json`` and orjson let through silently, or
crash on, is refused with one line that says where.

- a key given twice in one object (the parsers keep the last value without a word): refused,
  naming the key and, in a top-level list of records, the record and its line;
- nesting deeper than ``MAX_DEPTH`` (a 10,000-deep document made ``json`` raise RecursionError
  and abort a whole refresh): refused, naming the depth found;
- numbers that are not finite (``NaN``, ``Infinity``, ``1e309``): refused by orjson's own
  parser, which never produces one.

``loads`` raises ``JSONRefused`` (a ``ValueError``); a source turns it into its ``ParseError``
with its own context (round, page, model), so one bad body fails only itself. ``finite`` checks
a number parsed from a string field (Azure's ``retailPrice`` comes as JSON numbers, but a
mirror may quote them).
"""

from __future__ import annotations

import json
import math

import orjson

MAX_DEPTH = 64  # every source's documents nest 2-6 deep; orjson's own bound is 1024


class JSONRefused(ValueError):
    """Bytes that are not strict JSON; the message says what and where, on one line, worded
    to follow "the JSON " ("is malformed: …", "repeats key 'x' …", "nests 70 levels deep …",
    "holds a number that is not finite …")."""


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique(pairs: list[tuple[str, object]]) -> dict:
    out = dict(pairs)
    if len(out) != len(pairs):
        keys = [k for k, _ in pairs]
        raise _DuplicateKey(next(k for i, k in enumerate(keys) if k in keys[:i]))
    return out


def _depth(value: object) -> int:
    """How deep containers nest in ``value`` (a scalar is 0), without recursion."""
    deepest, stack = 0, [(value, 1)] if isinstance(value, dict | list) else []
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        children = node.values() if isinstance(node, dict) else node
        stack.extend((c, level + 1) for c in children if isinstance(c, dict | list))
    return deepest


def _record_of(text: str) -> str:
    """Where the duplicated key is, for a top-level list of records: ``record N (line L)``;
    '' otherwise. Only on the failure path: decodes the list one element at a time."""
    decoder = json.JSONDecoder(object_pairs_hook=_unique)
    at = len(text) - len(text.lstrip())
    if not text.startswith("[", at):
        return ""
    at, index = at + 1, 0
    while True:
        at += len(text[at:]) - len(text[at:].lstrip())
        try:
            _, end = decoder.raw_decode(text, at)
        except _DuplicateKey:
            return f" in record {index} (line {text.count(chr(10), 0, at) + 1})"
        except ValueError:
            return ""
        at, index = end + len(text[end:]) - len(text[end:].lstrip()) + 1, index + 1


def loads(data: bytes | str, *, max_depth: int = MAX_DEPTH) -> object:
    """The JSON value of ``data``, refused (``JSONRefused``) when it is not valid JSON, holds a
    non-finite number, nests deeper than ``max_depth`` or repeats a key in one object."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as e:
        what = ("nests deeper than 1024 levels" if "depth limit" in str(e)
                else f"holds a number that is not finite ({e})" if "infinity" in str(e)
                else f"is malformed: {e}")
        raise JSONRefused(what) from None
    depth = _depth(value)
    if depth > max_depth:
        raise JSONRefused(f"nests {depth} levels deep; at most {max_depth} are accepted")
    text = data.decode("utf-8") if isinstance(data, bytes | bytearray) else data
    try:  # depth is bounded now, so Python's parser cannot recurse too far
        # its value is the one returned: exact for integers beyond 64 bits, which orjson
        # reads as floats (orjson has already refused what is not finite)
        return json.loads(text, object_pairs_hook=_unique)
    except _DuplicateKey as e:
        raise JSONRefused(f"repeats key {e.key!r} in one object{_record_of(text)}; which "
                          "value is meant cannot be told") from None


def finite(value: object) -> float:
    """``value`` as a float, refused (``JSONRefused``) when it is NaN or infinite (the strings
    "NaN", "inf", "1e309" convert to such floats)."""
    number = float(value)  # type: ignore[arg-type]
    if not math.isfinite(number):
        raise JSONRefused(f"{value!r} is not a finite number")
    return number
