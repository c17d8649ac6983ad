"""docs/event-log.md and event_schema.py describe the same contract; validate_record enforces it."""

from __future__ import annotations

import re
from pathlib import Path

from zkcontroller.event_schema import FIELDS, RECORD_TYPES, SCHEMA_VERSION, validate_record

DOC = Path(__file__).resolve().parents[2] / "docs" / "event-log.md"


def _doc_table(heading: str) -> list[list[str]]:
    text = DOC.read_text(encoding="utf-8")
    section = text.split(f"## {heading}", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")][2:]  # skip header + rule
    return [[cell.strip().strip("`") for cell in row.strip("|").split("|")] for row in rows]


def test_doc_lists_the_same_fields_and_types_in_the_same_order() -> None:
    documented = [(row[0], row[1]) for row in _doc_table("Fields")]
    assert documented == [(f.name, f.type) for f in FIELDS]


def test_doc_lists_the_same_record_types_and_required_fields() -> None:
    documented = {row[0]: tuple(re.findall(r"[a-z_]+", row[1])) for row in _doc_table("Record types")}
    assert documented == RECORD_TYPES


def test_doc_names_the_schema_version() -> None:
    assert f"schema_version {SCHEMA_VERSION}" in DOC.read_text(encoding="utf-8")


def _broker_failed(**overrides: object) -> dict[str, object]:
    record: dict[str, object] = {
        "schema_version": 1, "type": "broker_failed", "ts_ms": 1_700_000_000_000, "cluster": "c1",
        "controller_id": 1, "controller_epoch": 3, "broker_id": 2,
    }
    record.update(overrides)
    return record


def test_valid_record_has_no_problems() -> None:
    assert validate_record(_broker_failed()) == []


def test_problems_name_the_field() -> None:
    assert validate_record(_broker_failed(broker_id=None)) == ["broker_failed needs broker_id"]
    assert validate_record(_broker_failed(ts_ms="soon")) == ["ts_ms must be bigint, got 'soon'"]
    assert validate_record(_broker_failed(isr=[1, True])) == ["isr must be array<int>, got [1, True]"]
    assert validate_record(_broker_failed(colour="red")) == ["unknown fields ['colour']"]
    assert validate_record(_broker_failed(type="nap")) == ["unknown type 'nap'"]
    assert validate_record(_broker_failed(schema_version=2)) == ["schema_version must be 1"]


def test_numbers_the_job_columns_cannot_hold_are_problems_named_with_their_range() -> None:
    assert validate_record(_broker_failed(ts_ms=253_402_300_799_999, broker_id=2**31 - 1)) == []
    assert validate_record(_broker_failed(ts_ms=10**17)) == [
        "ts_ms out of range [-62135596800000, 253402300799999]: 100000000000000000"]
    assert validate_record(_broker_failed(broker_id=-(2**31) - 1)) == [
        "broker_id out of range [-2147483648, 2147483647]: -2147483649"]
    assert validate_record(_broker_failed(broker_id=2**400)) == [
        "broker_id out of range [-2147483648, 2147483647]: an int of 401 bits"]
    isr_change = {"schema_version": 1, "type": "isr_change", "ts_ms": 0, "cluster": "c1", "controller_id": 1,
                  "controller_epoch": 3, "topic": "t", "partition": 0, "isr": [1, 2**31]}
    assert [p for p in validate_record(isr_change) if " out of range " in p] == [
        "isr out of range [-2147483648, 2147483647]: [1, 2147483648]"]
