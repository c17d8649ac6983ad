"""The JSONL event-log contract (schema_version 1): the single source of truth for its fields.

The controller's writer imports ``FIELDS``/``RECORD_TYPES``/``validate_record`` from here. The Spark job's
``events`` table is a column list of its own (``analytics.tables.EVENTS``, shared with Kafka-format lines); the
job reads each field here into the column ``analytics.extract.JSONL_COLUMNS`` names (two renamed, one dropped,
each listed there), and ``tests/analytics/test_event_columns.py`` fails when a field here has no column of its
type there or a column there is neither a field here nor listed as Kafka-only. ``docs/event-log.md`` documents
the same tables and ``tests/analytics/test_event_schema.py`` checks that the document and this module agree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class FieldSpec:
    """One field of an event-log record; ``type`` is a Spark SQL type name."""

    name: str
    type: str
    description: str


FIELDS: tuple[FieldSpec, ...] = (
    FieldSpec("schema_version", "int", "Always 1 for this version of the contract."),
    FieldSpec("type", "string", "Record type, one of RECORD_TYPES."),
    FieldSpec("ts_ms", "bigint", "When it happened: integer milliseconds since the Unix epoch, UTC."),
    FieldSpec("cluster", "string", "Name of the Kafka cluster the controller manages."),
    FieldSpec("controller_id", "int", "Broker id of the controller that wrote the record."),
    FieldSpec("controller_epoch", "int", "That controller's epoch (/controller_epoch) when it wrote it."),
    FieldSpec("event", "string", "Controller event name as in Kafka (BrokerChange, TopicChange, ...)."),
    FieldSpec("queue_time_ms", "bigint", "Milliseconds the event waited in the controller queue."),
    FieldSpec("processing_time_ms", "bigint", "Milliseconds the controller spent processing the event."),
    FieldSpec("topic", "string", "Topic name."),
    FieldSpec("partition", "int", "Partition number."),
    FieldSpec("broker_id", "int", "Broker concerned: the replica, or the broker registered or failed."),
    FieldSpec("broker_epoch", "bigint",
              "Broker epoch (czxid of /brokers/ids/<id>) of the broker's registration the controller holds."),
    FieldSpec("from_state", "string", "State before the transition (Kafka state name)."),
    FieldSpec("to_state", "string", "State after the transition (Kafka state name)."),
    FieldSpec("leader", "int", "Leader broker id after the change; -1 means no leader."),
    FieldSpec("old_leader", "int", "Leader broker id before an election; -1 means none."),
    FieldSpec("isr", "array<int>", "In-sync replica broker ids after the change."),
    FieldSpec("leader_epoch", "int", "Partition leader epoch after the change."),
    FieldSpec("strategy", "string", "Election strategy: offline, reassignment, preferred, controlled_shutdown."),
    FieldSpec("trigger", "string", "What asked for an election: auto, zk, admin, or the event name."),
    FieldSpec("clean", "boolean", "False when the new leader was not in the ISR (unclean election)."),
    FieldSpec("phase", "string", "Step of a topic deletion or partition reassignment (see the record types)."),
    FieldSpec("deletion_reason", "string", "Why a topic deletion was halted or refused."),
    FieldSpec("replicas", "array<int>", "A partition's full replica set RS after a reassignment step."),
    FieldSpec("adding_replicas", "array<int>", "Replicas a reassignment is adding (AR)."),
    FieldSpec("removing_replicas", "array<int>", "Replicas a reassignment is removing (RR)."),
)

FIELD_NAMES: tuple[str, ...] = tuple(f.name for f in FIELDS)
FIELDS_BY_NAME: dict[str, FieldSpec] = {f.name: f for f in FIELDS}

COMMON_REQUIRED = ("schema_version", "type", "ts_ms", "cluster")

RECORD_TYPES: dict[str, tuple[str, ...]] = {
    "controller_event": ("controller_id", "controller_epoch", "event", "queue_time_ms", "processing_time_ms"),
    "partition_state_change": (
        "controller_id", "controller_epoch", "topic", "partition", "from_state", "to_state",
    ),
    "replica_state_change": (
        "controller_id", "controller_epoch", "topic", "partition", "broker_id", "from_state", "to_state",
    ),
    "isr_change": ("controller_id", "controller_epoch", "topic", "partition", "leader", "isr", "leader_epoch"),
    "leader_election": (
        "controller_id", "controller_epoch", "topic", "partition", "strategy", "old_leader", "leader",
        "isr", "leader_epoch", "clean",
    ),
    "controller_elected": ("controller_id", "controller_epoch"),
    "controller_ready": ("controller_id", "controller_epoch"),
    "controller_resigned": ("controller_id", "controller_epoch"),
    "broker_registered": ("controller_id", "controller_epoch", "broker_id"),
    "broker_failed": ("controller_id", "controller_epoch", "broker_id"),
    "topic_deletion": ("controller_id", "controller_epoch", "topic", "phase"),
    "partition_reassignment": ("controller_id", "controller_epoch", "topic", "partition", "phase", "replicas"),
    "controlled_shutdown": ("controller_id", "controller_epoch", "broker_id"),
}
"""Record type -> fields that must be present (besides COMMON_REQUIRED); other fields are optional."""

_PY_TYPES: dict[str, tuple[type, ...]] = {
    "int": (int,), "bigint": (int,), "string": (str,), "boolean": (bool,), "array<int>": (list,),
}
_RANGES = {"int": (-(2**31), 2**31 - 1), "bigint": (-(2**63), 2**63 - 1), "array<int>": (-(2**31), 2**31 - 1)}
"""What the Spark job's columns hold: a JSON number past them would stop the job's Arrow conversion, not one line."""
TS_MS_RANGE = (-62_135_596_800_000, 253_402_300_799_999)
"""``ts_ms`` as an instant Spark can hold (years 0001-9999; beyond them ``timestamp_millis`` overflows)."""


def validate_record(record: dict[str, Any]) -> list[str]:
    """Problems with one record (empty when valid): what the writer should assert before writing."""
    problems: list[str] = []
    unknown = sorted(set(record) - set(FIELD_NAMES))
    if unknown:
        problems.append(f"unknown fields {unknown}")
    rtype = record.get("type")
    if rtype not in RECORD_TYPES:
        return [*problems, f"unknown type {rtype!r}"]
    if record.get("schema_version") != SCHEMA_VERSION:
        problems.append(f"schema_version must be {SCHEMA_VERSION}")
    for name in (*COMMON_REQUIRED, *RECORD_TYPES[rtype]):
        if record.get(name) is None:
            problems.append(f"{rtype} needs {name}")
    for name, value in record.items():
        spec = FIELDS_BY_NAME.get(name)
        if spec is None or value is None:
            continue
        ok = isinstance(value, _PY_TYPES[spec.type]) and not (
            spec.type != "boolean" and isinstance(value, bool)
        )
        if ok and spec.type == "array<int>":
            ok = all(isinstance(v, int) and not isinstance(v, bool) for v in value)
        if not ok:
            problems.append(f"{name} must be {spec.type}, got {value!r}")
            continue
        bounds = TS_MS_RANGE if name == "ts_ms" else _RANGES.get(spec.type)
        if bounds is None:
            continue
        low, high = bounds
        if any(not low <= v <= high for v in (value if spec.type == "array<int>" else (value,))):
            problems.append(f"{name} out of range [{low}, {high}]: {_short(value)}")
    return problems


def _short(value: object) -> str:
    """A value for a problem's text, cut: a JSON number can have thousands of digits."""
    if isinstance(value, int) and value.bit_length() > 200:
        return f"an int of {value.bit_length()} bits"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
