"""insert_rows and insert_columns: the table's own columns decide what is read."""

from __future__ import annotations

from datetime import UTC, datetime

import duckdb
import pytest

from warehouse.storage.db import insert_columns, insert_rows


def test_rows_are_read_by_the_table_s_columns_whatever_keys_each_row_has():
    con = duckdb.connect()
    con.execute("CREATE TABLE t (a INTEGER, b VARCHAR, seen TIMESTAMP WITH TIME ZONE, x DOUBLE)")
    when = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
    rows = [{"a": 1, "ignored": "not a column"},        # b, seen, x missing: NULL
            {"a": 2, "b": "two", "seen": when, "x": 2},     # keys only later rows carry are kept
            {"b": "three", "x": 3.5}]
    assert insert_rows(con, "t", rows, batch=2) == 3
    got = con.execute("SELECT a, b, seen, x FROM t ORDER BY b NULLS FIRST").fetchall()
    assert got == [(1, None, None, None), (None, "three", None, 3.5), (2, "two", when, 2.0)]


def test_an_unknown_table_is_an_error_not_a_silent_no_op():
    with pytest.raises(ValueError, match="no table 'nope'"):
        insert_rows(duckdb.connect(), "nope", [{"a": 1}])


def test_columns_are_cast_to_the_table_s_types_and_a_missing_one_is_null():
    con = duckdb.connect()
    con.execute("CREATE TABLE t (a INTEGER, b VARCHAR, seen TIMESTAMP WITH TIME ZONE, x DOUBLE)")
    when = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
    # x absent (NULL), "ignored" not a column of t, a given as floats (cast to INTEGER)
    assert insert_columns(con, "t", {"a": [1.0, 2.0], "b": ["one", None], "seen": [when, None],
                                     "ignored": ["x", "y"]}) == 2
    assert con.execute("SELECT a, b, seen, x FROM t ORDER BY a").fetchall() == [
        (1, "one", when, None), (2, None, None, None)]
    assert insert_columns(con, "t", {"nothing": [1]}) == 0  # no column of t: nothing written
    assert con.execute("SELECT count(*) FROM t").fetchone() == (2,)
    with pytest.raises(ValueError, match="no table 'nope'"):
        insert_columns(con, "nope", {"a": [1]})
