"""Column lists of the two extracted tables (``events``, ``rejected_lines``) every later stage relies on.

Spark type names are kept as DDL strings so this module imports without pyspark; ``struct()`` builds the
StructType when a caller needs one (explicit schemas in tests, empty frames).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

EVENTS: tuple[tuple[str, str], ...] = (
    ("ts", "timestamp"),
    ("ts_ms", "bigint"),
    ("cluster", "string"),
    ("source_file", "string"),
    ("line_number", "bigint"),
    ("source_format", "string"),
    ("level", "string"),
    ("logger", "string"),
    ("kind", "string"),
    ("controller_id", "int"),
    ("controller_epoch", "int"),
    ("broker_id", "int"),
    ("broker_epoch", "bigint"),
    ("brokers", "array<int>"),
    ("added_brokers", "array<int>"),
    ("live_brokers", "array<int>"),
    ("topic", "string"),
    ("partition", "int"),
    ("from_state", "string"),
    ("to_state", "string"),
    ("leader", "int"),
    ("old_leader", "int"),
    ("isr", "array<int>"),
    ("leader_epoch", "int"),
    ("strategy", "string"),
    ("trigger", "string"),
    ("clean", "boolean"),
    ("event_name", "string"),
    ("queue_time_ms", "bigint"),
    ("processing_time_ms", "bigint"),
    ("exception", "string"),
    ("phase", "string"),
    ("deletion_reason", "string"),
    ("topics", "string"),
    ("replicas", "array<int>"),
    ("adding_replicas", "array<int>"),
    ("removing_replicas", "array<int>"),
)
EVENT_COLUMNS: tuple[str, ...] = tuple(name for name, _ in EVENTS)

REJECTED: tuple[tuple[str, str], ...] = (
    ("cluster", "string"),
    ("source_file", "string"),
    ("line_number", "bigint"),
    ("source_format", "string"),
    ("reason", "string"),
    ("line", "string"),
)
REJECTED_COLUMNS: tuple[str, ...] = tuple(name for name, _ in REJECTED)
MAX_REJECTED_LINE_CHARS = 1000


def struct(columns: tuple[tuple[str, str], ...]) -> StructType:
    """StructType (all nullable) from a (name, DDL type) list."""
    from pyspark.sql import types as T

    simple = {
        "int": T.IntegerType(), "bigint": T.LongType(), "string": T.StringType(), "boolean": T.BooleanType(),
        "timestamp": T.TimestampType(), "date": T.DateType(), "double": T.DoubleType(),
        "array<int>": T.ArrayType(T.IntegerType()),
    }
    return T.StructType([T.StructField(name, simple[dtype], True) for name, dtype in columns])
