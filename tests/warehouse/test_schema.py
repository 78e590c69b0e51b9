"""warehouse.model.schema: one declaration makes the tables and their comments, and a table made by
an earlier version gains the columns added since; the API answers NULL for a column that an
older snapshot lacks."""

from __future__ import annotations

import duckdb
import pytest

from warehouse.exceptions import QueryError
from warehouse.model.public import MlperfResultPublic
from warehouse.model.schema import TABLES, Claim, create_all
from warehouse.queries import ListQuery, relation_columns, run_list
from warehouse.storage.db import insert_rows


def test_every_table_and_column_is_created_with_its_comment():
    con = duckdb.connect()
    create_all(con)
    for model in TABLES:
        table = model.__table__.name  # type: ignore[attr-defined]
        cols = dict(con.execute("SELECT column_name, comment FROM duckdb_columns() "
                                "WHERE table_name = ?", [table]).fetchall())
        assert set(cols) == set(model.model_fields), table
        assert all(cols.values()), table


def test_a_table_from_an_earlier_version_gains_new_columns():
    con = duckdb.connect()
    create_all(con)
    con.execute("ALTER TABLE mlperf_result DROP COLUMN source_format")
    con.execute("ALTER TABLE mlperf_result DROP COLUMN system_id")
    create_all(con)  # a refresh staging a copy of an old snapshot does this first
    comments = dict(con.execute("SELECT column_name, comment FROM duckdb_columns() "
                                "WHERE table_name = 'mlperf_result'").fetchall())
    assert comments["source_format"] and comments["system_id"]


def test_a_table_from_an_earlier_version_gets_this_versions_column_comments():
    """A staged copy of an old snapshot documents its columns as the code does (the claim's
    evidence comment once promised "never measured", naming a label it cannot hold)."""
    con = duckdb.connect()
    create_all(con)
    con.execute("COMMENT ON COLUMN claim.evidence IS 'Evidence label (never measured).'")
    create_all(con)
    [(comment,)] = con.execute("SELECT comment FROM duckdb_columns() WHERE table_name = 'claim' "
                               "AND column_name = 'evidence'").fetchall()
    assert comment == Claim.model_fields["evidence"].description
    assert "measured" not in comment.replace("_measured", "")


def test_a_column_that_became_optional_loses_not_null_on_an_earlier_table():
    """hardware_spec.value was required before figures in words (memory type, form factor)."""
    con = duckdb.connect()
    create_all(con)
    con.execute("DROP TABLE hardware_spec")
    con.execute("CREATE TABLE hardware_spec (id VARCHAR PRIMARY KEY, hardware_id VARCHAR NOT NULL, "
                "metric VARCHAR NOT NULL, value DOUBLE NOT NULL, unit VARCHAR NOT NULL, "
                "evidence VARCHAR NOT NULL, checked_on DATE NOT NULL, source_title VARCHAR NOT NULL, "
                "source_url VARCHAR NOT NULL, quote VARCHAR, note VARCHAR, file VARCHAR NOT NULL, "
                "source_snapshot_id VARCHAR NOT NULL)")
    create_all(con)
    insert_rows(con, "hardware_spec", [{
        "id": "x:memory_type", "hardware_id": "x", "metric": "memory_type", "value": None,
        "value_text": "HBM3", "unit": None, "evidence": "vendor_spec", "checked_on": "2026-12-04",
        "source_title": "t", "source_url": "https://example.com", "quote": "HBM3",
        "file": "hardware.yaml", "source_snapshot_id": "s"}])
    assert con.execute("SELECT value, value_text FROM hardware_spec").fetchall() == [
        (None, "HBM3")]
    still = con.execute("SELECT is_nullable FROM duckdb_columns() WHERE table_name = "
                        "'hardware_spec' AND column_name = 'metric'").fetchone()
    assert still == (False,)


def test_an_older_snapshot_answers_null_for_a_column_it_lacks():
    con = duckdb.connect()
    create_all(con)
    insert_rows(con, "mlperf_result", [{
        "id": "r", "round": "v6.1", "organization": "O", "availability": "available",
        "division": "closed", "system_name": "S", "platform": "P", "model": "m",
        "model_id": "m", "model_family": "m", "scenario": "Offline", "scenario_raw": "Offline",
        "result": 1.0, "units": "Tokens/s", "is_power": False, "accelerator_mix": "none",
        "version": "v6.1", "row_number": 2, "evidence": "measured", "source_snapshot_id": "s",
        "system_id": "6.1-0001"}])
    con.execute("ALTER TABLE mlperf_result DROP COLUMN system_id")
    have = relation_columns(con, "mlperf_result")
    _, [row], cols = run_list(con, ListQuery(relation="mlperf_result",
                                             public=MlperfResultPublic), have)
    assert row["system_id"] is None and row["id"] == "r" and "system_id" in cols


@pytest.mark.parametrize("column, where", [
    ("division", {"equals": {"division": ["closed"]}}),
    ("system_name", {"contains": {"system_name": "DGX"}}),
    ("result", {"ranges": {"result": (1.0, None)}})])
def test_a_filter_on_a_column_an_older_snapshot_lacks_says_so(column, where):
    """Every kind of filter (equals, contains, a range) on a column the snapshot asked for
    (``as_of``) predates is refused naming its parameter, not a database error."""
    con = duckdb.connect()
    create_all(con)
    con.execute(f"ALTER TABLE mlperf_result DROP COLUMN {column}")
    have = relation_columns(con, "mlperf_result")
    with pytest.raises(QueryError, match=f"cannot filter on '{column}'") as e:
        run_list(con, ListQuery(relation="mlperf_result", public=MlperfResultPublic, **where),
                 have)
    assert e.value.param == column
