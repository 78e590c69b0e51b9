"""insert_rows and insert_columns: the table's own columns decide what is read. ``parsed``:
a kept parse answers as its text does, on any connection of DuckDB's default settings, for any
values bound; a long text is not kept."""

from __future__ import annotations

from datetime import UTC, datetime

import duckdb
import pytest

from warehouse.storage.db import PARSE_KEPT_CHARS, insert_columns, insert_rows, parsed


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


def test_a_kept_parse_answers_as_its_text_on_every_connection_and_for_every_value():
    """One SQL text is parsed once; executed from that parse on two databases, from four
    threads at once, each with its own values, every answer is the one the text gives."""
    from concurrent.futures import ThreadPoolExecutor

    sql = "SELECT n FROM t WHERE n % ? = ? ORDER BY n"
    cons = []
    for rows in (100, 37):  # two databases: the same text reads each one's own rows
        con = duckdb.connect()
        con.execute("CREATE TABLE t AS SELECT range AS n FROM range(?)", [rows])
        cons.append(con)
    first = parsed(sql)

    def both(args: tuple[int, int, int]) -> tuple[list, list]:
        i, m, r = args
        cur = cons[i % 2].cursor()
        try:
            return cur.execute(parsed(sql), [m, r]).fetchall(), cur.execute(sql, [m, r]).fetchall()
        finally:
            cur.close()

    cases = [(i, m, r) for i in range(4) for m in (2, 3, 7) for r in range(m)]
    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(both, cases))
    for (i, m, r), (kept, text) in zip(cases, answers, strict=True):
        assert kept == text == [(n,) for n in range((100, 37)[i % 2]) if n % m == r]
    assert parsed(sql) is first  # every execution from the one parse, kept


def test_a_text_that_is_not_one_statement_is_a_clear_error():
    with pytest.raises(duckdb.ParserException):
        parsed("SELEC 1")
    with pytest.raises(duckdb.InvalidInputException, match="one SQL statement expected, not 2"):
        parsed("SELECT 1; SELECT 2")
    assert duckdb.connect().execute(parsed("SELECT 1")).fetchall() == [(1,)]


def test_a_text_longer_than_the_kept_ones_is_executed_as_it_is():
    """A long text (a subquery inlined whole) is not kept: its parse would hold memory
    nothing counts; it answers all the same."""
    con = duckdb.connect()
    long = "SELECT " + " + ".join("?" for _ in range(PARSE_KEPT_CHARS // 4)) + " AS total"
    assert len(long) > PARSE_KEPT_CHARS
    assert parsed(long) is long  # not parsed here, nothing kept
    assert con.execute(parsed(long), [1] * (PARSE_KEPT_CHARS // 4)).fetchall() == [
        (PARSE_KEPT_CHARS // 4,)]
