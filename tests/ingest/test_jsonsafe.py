"""ingest.jsonsafe: the strict JSON loader every source's JSON goes through."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ingest.jsonsafe import MAX_DEPTH, JSONRefused, finite, loads


@pytest.mark.parametrize(("body", "message"), [
    (b'[{"a": 1},\n {"b": 1, "b": 2}]', "repeats key 'b' in one object in record 1 (line 2)"),
    (b'{"Items": [{"x": 1, "x": 1}]}', "repeats key 'x' in one object;"),
    (b"[" * 10_000 + b"]" * 10_000, "nests deeper than 1024 levels"),
    (b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1), f"nests {MAX_DEPTH + 1} levels deep"),
    (b"[1e309]", "holds a number that is not finite"),
    (b"[-1e400]", "holds a number that is not finite"),
    (b'{"p": NaN}', "is malformed"),
    (b'{"p": Infinity}', "is malformed"),
    (b'[{"ID": 1,', "is malformed"),
])
def test_what_is_refused_is_said_in_one_line(body, message):
    with pytest.raises(JSONRefused) as e:
        loads(body)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_depth_at_the_bound_and_strings_with_brackets_are_fine():
    deep = b"[" * MAX_DEPTH + b"]" * MAX_DEPTH
    assert loads(deep) is not None
    assert loads('{"a": "[[[{{{", "b": {"a": 1}}') == {"a": "[[[{{{", "b": {"a": 1}}


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(), lambda children: st.lists(children) | st.dictionaries(st.text(), children),
    max_leaves=20)


@given(json_values)
def test_every_plain_document_reads_as_json_reads_it(value):
    text = json.dumps(value)
    assert loads(text) == json.loads(text)


@pytest.mark.parametrize("text", ["NaN", "nan", "inf", "-Infinity", "1e309"])
def test_finite_refuses_non_finite_strings(text):
    with pytest.raises(JSONRefused, match="not a finite number"):
        finite(text)
    assert finite("98.32") == 98.32
