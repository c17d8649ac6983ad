"""Extract: find the input files, read their lines with exact line numbers, parse them into ``events``.

Kafka log4j lines are parsed with Spark built-ins only (``rlike``, ``regexp_replace``, ``split``) compiled
from the same layout and template regexes as the pure-Python reference parser, so the JVM does the work
and no row crosses into Python. JSONL event-log lines go through ``from_json`` with the contract schema.
Unparseable lines become ``rejected_lines`` rows; nothing here raises on bad content.
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass, field
from pathlib import Path

from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from zkcontroller.analytics import kafka_log_parser as K
from zkcontroller.analytics.tables import EVENTS, MAX_REJECTED_LINE_CHARS, REJECTED_COLUMNS
from zkcontroller.event_schema import FIELDS as EVENT_FIELDS

JSONL_SUFFIXES = (".jsonl", ".ndjson", ".json")
COMPRESSED_SUFFIXES = (".gz", ".bz2", ".deflate")
_GLOB_CHARS = set("*?[")


class InputError(Exception):
    """An input path that is missing or holds nothing to read; the message names the path."""


@dataclass
class InputFiles:
    """Resolved input files, split by format (JSONL event log or Kafka log4j text)."""

    jsonl: list[str] = field(default_factory=list)
    kafka: list[str] = field(default_factory=list)

    @property
    def all(self) -> list[str]:
        return [*self.jsonl, *self.kafka]


def is_jsonl(path: str) -> bool:
    """JSONL by name: ``.jsonl``/``.ndjson``/``.json``, optionally compressed."""
    name = path.lower()
    for suffix in COMPRESSED_SUFFIXES:
        name = name.removesuffix(suffix)
    return name.endswith(JSONL_SUFFIXES)


def _files_under(directory: Path) -> list[Path]:
    found = []
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")))
        found += [Path(root) / f for f in sorted(files) if not f.startswith((".", "_")) and not f.endswith(".crc")]
    return found


def resolve_inputs(inputs: list[str]) -> InputFiles:
    """Expand files, directories (recursively) and globs; every INPUT must yield a non-empty file."""
    if not inputs:
        raise InputError("no INPUT given")
    resolved = InputFiles()
    seen: set[str] = set()
    for raw in inputs:
        path = Path(raw)
        if path.is_dir():
            candidates = _files_under(path)
            if not candidates:
                raise InputError(f"{raw}: directory contains no files")
        elif path.is_file():
            candidates = [path]
        elif _GLOB_CHARS & set(raw):
            candidates = [Path(p) for p in sorted(glob.glob(raw, recursive=True)) if Path(p).is_file()]
            if not candidates:
                raise InputError(f"{raw}: no file matches this pattern")
        else:
            raise InputError(f"{raw}: no such file or directory")
        non_empty = [p for p in candidates if p.stat().st_size > 0]
        if not non_empty:
            raise InputError(f"{raw}: input is empty")
        for p in non_empty:
            key = str(p.resolve())
            if key not in seen:
                seen.add(key)
                (resolved.jsonl if is_jsonl(key) else resolved.kafka).append(key)
    return resolved


_BIG = 1 << 30  # "to the end of the string" for substr
_JAVA_SPACE = " \t\n\u000b\f\r"  # what Java's regex \s matches
OK, SKIPPED, REJECTED = "ok", "skipped", "rejected"
PARSED: tuple[tuple[str, str], ...] = (
    ("file_path", "string"), ("block_start", "bigint"), ("row_id", "bigint"), ("status", "string"),
    ("reason", "string"), ("line", "string"),
    *((name, dtype) for name, dtype in EVENTS if name not in ("source_file", "line_number")),
)
"""Columns of one parsed line, before line numbering: what the extract caches (every line, skipped ones too)."""


def scan_lines(spark: SparkSession, files: list[str]) -> DataFrame:
    """(file_path, block_start, row_id, value) for every line; ``row_id`` is consecutive within a file block."""
    return spark.read.text(files).select(
        F.col("_metadata.file_path").alias("file_path"),
        F.col("_metadata.file_block_start").alias("block_start"),
        F.monotonically_increasing_id().alias("row_id"),
        F.col("value"),
    )


def number_lines(
    parsed: DataFrame, rows: DataFrame, cluster: str | None, cluster_pattern: str | None,
) -> DataFrame:
    """``rows`` (some of ``parsed``) with source_file, line_number (from 1 in each file) and the cluster of
    lines that have none.

    Spark splits large files into blocks and has no line numbers; each block's rows have consecutive
    ``row_id`` values, so a per-block count (every line, skipped ones included) gives each line's number.
    The per-block table is tiny and computed once per file block, so it is broadcast.
    """
    before = Window.partitionBy("file_path").orderBy("block_start").rowsBetween(Window.unboundedPreceding, -1)
    source_file = F.regexp_replace("file_path", r"^file:(//)?", "")
    blocks = (
        parsed.groupBy("file_path", "block_start")
        .agg(F.count(F.lit(1)).alias("n"), F.min("row_id").alias("first_row_id"))
        .select("file_path", "block_start", "first_row_id", source_file.alias("source_file"),
                cluster_column(source_file, cluster, cluster_pattern).alias("path_cluster"),
                F.coalesce(F.sum("n").over(before), F.lit(0)).alias("lines_before"))
    )
    return rows.join(F.broadcast(blocks), on=["file_path", "block_start"], how="inner").select(
        "*", (F.col("lines_before") + F.col("row_id") - F.col("first_row_id") + 1).alias("line_number"),
    ).withColumn("cluster", F.coalesce("cluster", "path_cluster"))


def cluster_column(source_file: Column, cluster: str | None, cluster_pattern: str | None) -> Column:
    """Cluster name: fixed, else group 1 of ``cluster_pattern`` on the path, else the parent directory."""
    if cluster:
        return F.lit(cluster)
    parent = F.regexp_extract(source_file, r"([^/]+)/[^/]+$", 1)
    if cluster_pattern:
        return F.coalesce(F.nullif(F.regexp_extract(source_file, cluster_pattern, 1), F.lit("")), parent)
    return parent


def _joined_groups(n: int) -> str:
    return K.SEP.join(f"${i}" for i in range(1, n + 1)) + K.SEP


def _blank_to_null(c: Column) -> Column:
    return F.nullif(c, F.lit(""))


def _starts_with_any(c: Column, prefixes: tuple[str, ...]) -> Column:
    test = c.startswith(prefixes[0])
    for prefix in prefixes[1:]:
        test = test | c.startswith(prefix)
    return test


def _with_layout(lines: DataFrame) -> DataFrame:
    """Adds ``p``: the LAYOUT groups (date, clock, millis, zone, level, message, logger, "") or a shorter array.

    Fast path, no scan of the message by regex: the anchored LAYOUT_HEAD, then the logger in the line's last
    ``(...)``. When that tail is a logger with nothing after it but whitespace, no earlier ``(`` can start a
    valid tail (one that did would have to end in ``[thread]``), so the lazy LAYOUT match would pick the
    same logger and message. Anything else (Strimzi's ``[thread]`` suffix, no layout) takes LAYOUT itself.
    Each intermediate is its own projection so Spark computes it once.
    """
    tail_pattern = "^" + K.LAYOUT_LOGGER.removeprefix(r"\(") + r"\s*$"
    stripped = F.col("stripped")
    staged = lines.select("*", F.when(~F.col("skipped"), F.regexp_extract(stripped, K.LAYOUT_HEAD, 0)).alias("_head"))
    staged = staged.select("*", stripped.substr(F.length("_head") + 1, F.lit(_BIG)).alias("_rest"))
    staged = staged.select("*", F.substring_index("_rest", "(", -1).alias("_tail"))
    paren = F.length("_rest") - F.length("_tail")  # 1-based position of the last "(" in rest, 0 if none
    staged = staged.select(
        "*", paren.alias("_paren"),
        ((F.col("_head") != "") & (paren > 0) & F.col("_tail").rlike(tail_pattern)).alias("_fast"))
    staged = staged.select("*", F.when(F.col("_fast"), F.split(
        F.regexp_replace("_head", K.LAYOUT_HEAD, _joined_groups(5)), K.SEP)).alias("_head_parts"))
    message = F.rtrim(F.col("_rest").substr(F.lit(1), F.col("_paren") - 1), F.lit(_JAVA_SPACE))
    fast_parts = F.array(*(F.get("_head_parts", i) for i in range(5)), message,
                         F.regexp_extract("_tail", tail_pattern, 1), F.lit(""))
    slow_parts = F.split(F.regexp_replace(stripped, K.LAYOUT, _joined_groups(7)), K.SEP)
    p = F.when(F.col("skipped"), F.lit(None)).when(F.col("_fast"), fast_parts).otherwise(slow_parts)
    return staged.select(*lines.columns, p.alias("p"))


def parse_kafka_lines(lines: DataFrame) -> DataFrame:
    """Every (file_path, block_start, row_id, value) line of Kafka log4j text as a PARSED row.

    Mirrors ``KafkaLogParser.parse_line`` step by step; cheap tests (``startswith``, ``contains``) guard every
    regex so each line runs only the few regexes that can match it.
    """
    value = F.col("value")
    bracket = value.startswith("[")  # the default layout: no continuation, no deployment prefix possible
    skipped = (F.trim(value) == "") | (~bracket & value.rlike(K.CONTINUATION))
    stripped = F.when(bracket, value).otherwise(F.regexp_replace(value, K.PREFIX, ""))
    staged = _with_layout(lines.select("file_path", "block_start", "row_id", "value", skipped.alias("skipped"),
                                       stripped.alias("stripped")))
    staged = staged.select("*", (F.size("p") == 8).alias("laid_out"))
    def p(i: int) -> Column:
        return F.get("p", i)  # null, not an error (ANSI), when the line has no layout

    ts_text = F.concat(
        p(0), F.lit("T"), p(1), F.lit("."), F.coalesce(_blank_to_null(p(2)), F.lit("000")),
        F.regexp_replace(p(3), r"^([+-]\d\d)(\d\d)$", "$1:$2"),
    )
    staged = staged.select("*", F.when(F.col("laid_out"), F.try_to_timestamp(ts_text)).alias("ts"))
    control = F.col("stripped").contains(K.SEP)
    status = (F.when(F.col("skipped"), F.lit(SKIPPED))
              .when(F.col("laid_out") & ~control & F.col("ts").isNotNull(), F.lit(OK))
              .otherwise(F.lit(REJECTED)))
    reason = (
        F.when(control, F.lit(K.REASON_CONTROL_CHAR))
        .when(~F.col("stripped").rlike(K.TIMESTAMP_START), F.lit(K.REASON_NO_TIMESTAMP))
        .when(F.col("laid_out"), F.lit(K.REASON_BAD_TIMESTAMP))
        .otherwise(F.lit(K.REASON_NO_LAYOUT))
    )
    staged = staged.select("*", status.alias("status"))
    rejected = F.col("status") == REJECTED
    staged = staged.select(
        "file_path", "block_start", "row_id", "ts", "status", p(4).alias("level"), p(5).alias("message"),
        p(6).alias("logger"), F.when(rejected, reason).alias("reason"),
        F.when(rejected, F.substring("value", 1, MAX_REJECTED_LINE_CHARS)).alias("line"),
    )
    return _kafka_fields(staged)


def _kafka_fields(records: DataFrame) -> DataFrame:
    """Log ident, old-style state-change prefix, template and fields of each record's message."""
    message, logger = F.col("message"), F.col("logger")
    has_ident = message.startswith("[") & (F.instr(message, "]") > 0)
    ident = F.when(has_ident, F.substring_index(message, "]", 1).substr(F.lit(2), F.lit(_BIG)))
    after = message.substr(F.length(ident) + 3, F.lit(_BIG))
    after = F.when(after.startswith(":") | after.startswith(","), after.substr(F.lit(2), F.lit(_BIG))).otherwise(after)
    after = F.when(after.startswith(" "), after.substr(F.lit(2), F.lit(_BIG))).otherwise(after)
    staged = records.select("*", ident.alias("ident"), F.when(has_ident, after).otherwise(message).alias("after"))
    ident, after = F.col("ident"), F.col("after")
    old_prefix = (logger == K.STATE_CHANGE_LOGGER) & (after.startswith("Controller ") | after.startswith("Broker "))
    old = {k: F.when(old_prefix, _blank_to_null(F.regexp_extract(after, K.OLD_STATE_PREFIX, g)))
           for k, g in (("controller_id", 1), ("controller_epoch", 2), ("broker_id", 3))}
    from_ident = {
        "controller_id": F.when(ident.contains("ontroller"), F.regexp_extract(ident, K.IDENT_CONTROLLER, 1)),
        "controller_epoch": F.when(ident.contains("epoch="), F.regexp_extract(ident, K.IDENT_EPOCH, 1)),
        "broker_id": F.when(ident.startswith("Broker id="), F.regexp_extract(ident, K.IDENT_BROKER, 1)),
    }
    base = {k: F.coalesce(old[k], _blank_to_null(from_ident[k])) for k in from_ident}
    body = F.when(old_prefix, F.regexp_replace(after, K.OLD_STATE_PREFIX, "")).otherwise(after)
    staged = staged.select("*", *(c.alias(f"_base_{k}") for k, c in base.items()), body.alias("body"))
    body = F.col("body")
    tid = None
    for i, t in enumerate(K.TEMPLATES):
        matches = body.rlike(t.pattern)
        if t.starts:  # startswith is a byte compare: it rules out almost every template at once
            matches = _starts_with_any(body, t.starts) & matches
        elif t.needle:
            matches = body.contains(t.needle) & matches
        tid = (tid if tid is not None else F).when(matches, i)
    staged = staged.select("*", tid.otherwise(-1).alias("tid"))
    tid = F.col("tid")
    parts = None
    for i, t in enumerate(K.TEMPLATES):
        if t.groups:
            arr = F.split(F.regexp_replace(body, t.pattern, _joined_groups(max(t.groups.values()))), K.SEP)
            parts = (parts if parts is not None else F).when(tid == i, arr)
    staged = staged.select("*", parts.alias("parts"))
    found = _template_fields(body, tid, F.col("parts"))
    kinds = None
    for i, t in enumerate(K.TEMPLATES):
        kinds = (kinds if kinds is not None else F).when(tid == i, F.lit(t.kind))
    values: dict[str, Column] = {}
    for name in K.PARSED_FIELDS:
        template_value = found.get(name)
        if name in base:
            values[name] = F.coalesce(template_value, F.col(f"_base_{name}"))
        else:
            values[name] = template_value if template_value is not None else F.lit(None)
    staged = staged.select("*", *(c.alias(f"_v_{name}") for name, c in values.items()), found["tp"].alias("_tp"))
    values = {name: F.col(f"_v_{name}") for name in values}
    tp = F.col("_tp")
    tp_topic = _blank_to_null(F.regexp_extract(tp, K.TP_SPLIT, 1))
    from_tp = values["topic"].isNull() & tp_topic.isNotNull()  # as the reference: the tp gives both or neither
    values["partition"] = F.when(from_tp, F.regexp_extract(tp, K.TP_SPLIT, 2)).otherwise(values["partition"])
    values["topic"] = F.when(from_tp, tp_topic).otherwise(values["topic"])
    int_list = lambda c: F.regexp_extract_all(c, F.lit(K.INT_LIST), 0).try_cast("array<int>")  # noqa: E731
    typed = {
        **{n: values[n].try_cast("int") for n in K.INT_FIELDS},
        **{n: int_list(values[n]) for n in K.LIST_FIELDS},
        "topic": values["topic"], "from_state": values["from_state"], "to_state": values["to_state"],
        "strategy": F.lower(values["strategy"]), "trigger": F.lower(values["trigger"]),
        "clean": values["clean"].cast("boolean"),
    }
    extra = {
        "ts_ms": F.unix_millis("ts"),
        "kind": kinds.otherwise(F.lit("other")), "event_name": F.lit(None),
        "queue_time_ms": F.lit(None), "processing_time_ms": F.lit(None),
    }
    ok = F.col("status") == OK
    columns = {**{name: F.when(ok, c) for name, c in {**typed, **extra}.items()},
               "source_format": F.lit("kafka_log"), "cluster": F.lit(None)}
    return staged.select(*(
        (columns[name] if name in columns else F.col(name)).cast(dtype).alias(name) for name, dtype in PARSED
    ))


def _template_fields(body: Column, tid: Column, parts: Column) -> dict[str, Column]:
    """Per output field, a CASE over the matched template id (only that template's regex runs)."""
    names = sorted({name for t in K.TEMPLATES for name in (*t.groups, *t.extra, *t.consts)})
    out: dict[str, Column] = {}
    for name in names:
        expr = None
        for i, t in enumerate(K.TEMPLATES):
            if name in t.consts:
                value: Column = F.lit(t.consts[name])
            elif name in t.groups:
                value = _blank_to_null(F.element_at(parts, t.groups[name]))
            elif name in t.extra:
                value = _blank_to_null(F.regexp_extract(body, K.fast_search(t.extra[name]), 1))
            else:
                continue
            expr = (expr if expr is not None else F).when(tid == i, value)
        out[name] = expr
    return out


def _or_null_text(c: Column) -> Column:
    return F.coalesce(c.cast("string"), F.lit("null"))


def event_spark_schema() -> T.StructType:
    """The Spark read schema for event-log lines, built from FIELDS (all nullable: validated later)."""
    spark_types = {
        "int": T.IntegerType(), "bigint": T.LongType(), "string": T.StringType(),
        "boolean": T.BooleanType(), "array<int>": T.ArrayType(T.IntegerType()),
    }
    return T.StructType([T.StructField(f.name, spark_types[f.type], True) for f in EVENT_FIELDS])


def parse_jsonl_lines(lines: DataFrame) -> DataFrame:
    """Every (file_path, block_start, row_id, value) line of our JSONL event log as a PARSED row."""
    from zkcontroller.event_schema import COMMON_REQUIRED, RECORD_TYPES, SCHEMA_VERSION

    schema = event_spark_schema().add("_corrupt", "string")
    blank = F.trim("value") == ""
    staged = lines.select(
        "file_path", "block_start", "row_id", "value", blank.alias("blank"),
        F.when(~blank, F.from_json("value", schema, {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": "_corrupt"}))
        .alias("r"),
    ).select("file_path", "block_start", "row_id", "value", "blank", "r.*")
    missing = None
    for rtype, required in RECORD_TYPES.items():
        names = F.concat_ws(", ", *(F.when(F.col(n).isNull(), F.lit(n)) for n in (*COMMON_REQUIRED, *required)))
        missing = (missing if missing is not None else F).when(F.col("type") == rtype, names)
    reason = (
        F.when(F.col("blank"), F.lit(None))
        .when(F.col("_corrupt").isNotNull() | F.col("type").isNull() & F.col("schema_version").isNull(),
              F.lit("not a JSON object of the event-log schema (bad JSON or wrong field type)"))
        .when(F.col("schema_version").isNull() | (F.col("schema_version") != SCHEMA_VERSION),
              F.concat(F.lit("unsupported schema_version "), _or_null_text(F.col("schema_version"))))
        .when(~F.col("type").isin(*RECORD_TYPES), F.concat(F.lit("unknown type "), _or_null_text(F.col("type"))))
        .when(missing != "", F.concat(F.lit("missing fields: "), missing))
    )
    staged = staged.select("*", reason.alias("reason"))
    status = (F.when(F.col("blank"), F.lit(SKIPPED)).when(F.col("reason").isNotNull(), F.lit(REJECTED))
              .otherwise(F.lit(OK)))
    membership = F.col("type").isin("broker_failed", "broker_registered")
    columns = {
        "status": status, "line": F.when(status == REJECTED, F.substring("value", 1, MAX_REJECTED_LINE_CHARS)),
        "ts": F.timestamp_millis("ts_ms"), "source_format": F.lit("jsonl"), "level": F.lit(None),
        "logger": F.lit(None), "kind": F.col("type"), "brokers": F.when(membership, F.array("broker_id")),
        "event_name": F.col("event"),
    }
    return staged.select(*(
        (columns[name] if name in columns else F.col(name)).cast(dtype).alias(name) for name, dtype in PARSED
    ))


@dataclass
class Extracted:
    """The extract stage's output: parsed events, rejected lines and the files they came from.

    Both frames read one persisted parse of every line (so the parse runs once, whatever is computed
    from them); call ``release()`` once they have been written.
    """

    events: DataFrame
    rejected: DataFrame
    files: InputFiles
    parsed: DataFrame | None = None

    def release(self) -> None:
        if self.parsed is not None:
            self.parsed.unpersist()


def extract(
    spark: SparkSession, inputs: list[str], cluster: str | None = None, cluster_pattern: str | None = None,
) -> Extracted:
    """Resolve INPUTs (raising InputError for missing/empty ones) and parse every line lazily, once."""
    from pyspark import StorageLevel

    files = resolve_inputs(inputs)
    parts: list[DataFrame] = []
    if files.kafka:
        parts.append(parse_kafka_lines(scan_lines(spark, files.kafka)))
    if files.jsonl:
        parts.append(parse_jsonl_lines(scan_lines(spark, files.jsonl)))
    parsed = parts[0] if len(parts) == 1 else parts[0].unionByName(parts[1])
    parsed = parsed.persist(StorageLevel.MEMORY_AND_DISK)
    events = number_lines(parsed, parsed.where(F.col("status") == OK), cluster, cluster_pattern).select(
        *(F.col(name) for name, _ in EVENTS))
    rejected = number_lines(parsed, parsed.where(F.col("status") == REJECTED), cluster, cluster_pattern).select(
        "cluster", "source_file", "line_number", "source_format", "reason", "line").select(*REJECTED_COLUMNS)
    return Extracted(events, rejected, files, parsed)
