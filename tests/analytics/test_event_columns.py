"""The event-log contract (``event_schema.FIELDS``) and the Spark job's ``events`` columns (``tables.EVENTS``)
agree: every field reaches a column of its type, every column is a field's or named here as Kafka-only.

ARCHITECTURE.md §6 asks for this test: the two lists are kept by hand in different layers, and a field the
writer gains would otherwise be dropped by the job without a word (or a column would be null for every JSONL
row).
"""

from __future__ import annotations

import json
from pathlib import Path

from zkcontroller.analytics import extract, tables
from zkcontroller.event_schema import FIELD_NAMES, FIELDS, RECORD_TYPES, SCHEMA_VERSION

RENAMED = {"type": "kind", "event": "event_name"}
"""Contract field -> its ``events`` column, where the names differ."""
DROPPED = {"schema_version"}
"""Contract fields no column holds (checked on read, then dropped)."""
NOT_FROM_THE_EVENT_LOG = {
    "ts": "derived from ts_ms in Spark",
    "source_file": "where the line was", "line_number": "where the line was", "source_format": "kafka_log or jsonl",
    "level": "log4j only", "logger": "log4j only", "exception": "a stack trace after a log4j line",
    "brokers": "Kafka lines list brokers; a JSONL broker_registered/broker_failed fills it from broker_id",
    "added_brokers": "Kafka's broker change line", "live_brokers": "Kafka's broker change line",
    "topics": "Kafka's deletion lines",
}
"""``events`` columns a JSONL record has no field for, and why."""


def test_every_contract_field_has_a_column_of_its_type() -> None:
    columns = dict(tables.EVENTS)
    missing = [(f.name, f.type) for f in FIELDS if f.name not in DROPPED
               and columns.get(RENAMED.get(f.name, f.name)) != f.type]
    assert missing == [], "contract fields with no events column of their type (add one to tables.EVENTS)"


def test_every_column_is_a_contract_field_or_known_to_come_from_elsewhere() -> None:
    from_contract = {RENAMED.get(name, name) for name in FIELD_NAMES if name not in DROPPED}
    unknown = [c for c in tables.EVENT_COLUMNS if c not in from_contract and c not in NOT_FROM_THE_EVENT_LOG]
    assert unknown == [], "events columns that are no contract field (add the field or list the column here)"
    assert not set(NOT_FROM_THE_EVENT_LOG) & from_contract, "a column listed as Kafka-only is a contract field"
    assert set(NOT_FROM_THE_EVENT_LOG) <= set(tables.EVENT_COLUMNS), "a listed column no longer exists"


def test_the_reader_maps_fields_as_this_table_does() -> None:
    assert extract.JSONL_RENAMED == RENAMED
    assert set(extract.JSONL_DROPPED) == DROPPED
    assert {f for f, _ in extract.JSONL_COLUMNS} == set(FIELD_NAMES) - DROPPED


def _row(record: dict[str, object], tmp_path: Path) -> dict[str, object]:
    path = f"{tmp_path}/events.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(record) + "\n")
    chunk = {"name": "events.jsonl", "path": path, "start": 0, "end": -1, "first_line": 1, "fmt": "jsonl"}
    rows = list(extract._jsonl_rows(chunk))
    assert len(rows) == 1 and rows[0]["status"] == extract.OK, rows
    batch = extract._Batch()
    batch.add(rows[0])
    batch.to_arrow(extract._arrow_schema())  # the job's conversion: must not raise
    return rows[0]


def test_a_record_with_every_field_fills_every_mapped_column(tmp_path: Path) -> None:
    values = {"int": 7, "bigint": 1_700_000_000_000, "string": "s", "boolean": True, "array<int>": [1, 2]}
    record: dict[str, object] = {f.name: values[f.type] for f in FIELDS}
    record.update(schema_version=SCHEMA_VERSION, type="broker_registered")
    row = _row(record, tmp_path)
    for name, column in extract.JSONL_COLUMNS:
        assert row[column] == record[name], column


def test_a_field_the_contract_does_not_know_never_reaches_a_column(tmp_path: Path) -> None:
    """``added_brokers`` is a column (Kafka lines) but no contract field, so nothing type-checks it in JSONL:
    copied, a string there stopped the whole job at its Arrow conversion."""
    record = {"schema_version": 1, "type": "broker_failed", "ts_ms": 1, "cluster": "c", "controller_id": 1,
              "controller_epoch": 1, "broker_id": 2, "added_brokers": "oops", "topics": [1], "level": 3}
    assert set(RECORD_TYPES["broker_failed"]) <= set(record)
    row = _row(record, tmp_path)
    assert (row.get("added_brokers"), row.get("topics"), row.get("level")) == (None, None, None)
    assert row["brokers"] == [2]
