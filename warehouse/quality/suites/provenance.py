"""Provenance and tagging, every fact table: a label from the vocabulary, a source snapshot
that exists, and `measured` only from the MLPerf ingester."""

from __future__ import annotations

from warehouse.model.schema import FACT_TABLES
from warehouse.model.vocabulary import TABLE_LABELS, Evidence
from warehouse.quality.suites import Rule, in_set, not_null, rows


def rules() -> list[Rule]:
    """The provenance rules of every fact table."""
    out: list[Rule] = []
    for table in FACT_TABLES:
        out += [
            not_null(f"{table}: evidence is never empty", table, "evidence"),
            in_set(f"{table}: evidence is in the vocabulary", table, "evidence",
                   [e.value for e in Evidence]),
            in_set(f"{table}: evidence is one this table may hold", table, "evidence",
                   sorted(e.value for e in TABLE_LABELS[table])),
            not_null(f"{table}: every row has a source snapshot", table, "source_snapshot_id"),
            rows(f"{table}: every source snapshot id exists in source_snapshot", table,
                 "SELECT * FROM {batch} WHERE source_snapshot_id NOT IN "
                 "(SELECT id FROM source_snapshot)"),
        ]
    out += [
        rows("only sources of the MLPerf kind produce measured rows", "source_snapshot",
             "SELECT id, source, kind FROM {batch} WHERE kind <> 'mlperf_summary' AND id IN ("
             + " UNION ALL ".join(f"SELECT source_snapshot_id FROM {t} WHERE evidence = 'measured'"
                                  for t in FACT_TABLES) + ")"),
        rows("no row from a curated file is measured", "claim",
             "SELECT id, evidence, file FROM {batch} WHERE evidence = 'measured'"),
        rows("every mlperf_result row is measured", "mlperf_result",
             "SELECT id, evidence FROM {batch} WHERE evidence <> 'measured'"),
        Rule(name="every source snapshot's raw bytes exist and match their sha256",
             table="source_snapshot", kind="raw_files"),
    ]
    return out
