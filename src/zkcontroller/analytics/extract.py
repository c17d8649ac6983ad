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

from zkcontroller.analytics import kafka_log_parser as K
from zkcontroller.analytics.tables import EVENTS, MAX_REJECTED_LINE_CHARS, REJECTED_COLUMNS

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


def read_lines(spark: SparkSession, files: list[str]) -> DataFrame:
    """(source_file, line_number, value) for every line, numbered from 1 in each file.

    Spark splits large files into blocks and has no line numbers; each block's rows are consecutive
    ``monotonically_increasing_id`` values, so a small per-block count gives each line's exact number.
    """
    scan = spark.read.text(files).select(
        F.col("value"),
        F.col("_metadata.file_path").alias("file_path"),
        F.col("_metadata.file_block_start").alias("block_start"),
        F.monotonically_increasing_id().alias("row_id"),
    )
    before = Window.partitionBy("file_path").orderBy("block_start").rowsBetween(Window.unboundedPreceding, -1)
    blocks = (
        scan.groupBy("file_path", "block_start")
        .agg(F.count(F.lit(1)).alias("n"), F.min("row_id").alias("first_row_id"))
        .select("file_path", "block_start", "first_row_id",
                F.coalesce(F.sum("n").over(before), F.lit(0)).alias("lines_before"))
    )
    return scan.join(F.broadcast(blocks), on=["file_path", "block_start"], how="inner").select(
        F.regexp_replace("file_path", r"^file:(//)?", "").alias("source_file"),
        (F.col("lines_before") + F.col("row_id") - F.col("first_row_id") + 1).alias("line_number"),
        F.col("value"),
    )


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


def _template_parts(body: Column, tid: Column) -> Column:
    """The matched template's groups as an array: one regexp_replace per line, whatever the group count."""
    parts = None
    for i, t in enumerate(K.TEMPLATES):
        if t.groups:
            arr = F.split(F.regexp_replace(body, t.pattern, _joined_groups(max(t.groups.values()))), K.SEP)
            parts = (parts if parts is not None else F).when(tid == i, arr)
    return parts


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
                value = _blank_to_null(F.regexp_extract(body, t.extra[name], 1))
            else:
                continue
            expr = (expr if expr is not None else F).when(tid == i, value)
        out[name] = expr
    return out


def parse_kafka_lines(lines: DataFrame, cluster: Column) -> tuple[DataFrame, DataFrame]:
    """(events, rejected) from (source_file, line_number, value) lines of Kafka log4j text."""
    value = F.col("value")
    keep = lines.select(
        "source_file", "line_number", "value", cluster.alias("cluster"),
    ).where(~((F.trim(value) == "") | value.rlike(K.CONTINUATION)))
    stripped = F.regexp_replace(value, K.PREFIX, "")
    staged = keep.select(
        "*", stripped.alias("stripped"),
        F.split(F.regexp_replace(stripped, K.LAYOUT, _joined_groups(7)), K.SEP).alias("p"),
    ).select("*", (F.size("p") == 8).alias("laid_out"))
    ts_text = F.concat(
        F.col("p")[0], F.lit("T"), F.col("p")[1], F.lit("."), F.coalesce(_blank_to_null(F.col("p")[2]), F.lit("000")),
        F.regexp_replace(F.col("p")[3], r"^([+-]\d\d)(\d\d)$", "$1:$2"),
    )
    parsed = staged.select("*", F.try_to_timestamp(ts_text).alias("ts"))
    good = F.col("laid_out") & ~F.col("stripped").contains(K.SEP) & F.col("ts").isNotNull()
    reason = (
        F.when(F.col("stripped").contains(K.SEP), F.lit(K.REASON_CONTROL_CHAR))
        .when(~F.col("stripped").rlike(K.TIMESTAMP_START), F.lit(K.REASON_NO_TIMESTAMP))
        .when(F.col("laid_out"), F.lit(K.REASON_BAD_TIMESTAMP))
        .otherwise(F.lit(K.REASON_NO_LAYOUT))
    )
    rejected = parsed.where(~good).select(
        "cluster", "source_file", "line_number", F.lit("kafka_log").alias("source_format"),
        reason.alias("reason"), F.substring("value", 1, MAX_REJECTED_LINE_CHARS).alias("line"),
    ).select(*REJECTED_COLUMNS)
    records = parsed.where(good).select(
        "cluster", "source_file", "line_number", "ts",
        F.col("p")[4].alias("level"), F.col("p")[5].alias("message"), F.col("p")[6].alias("logger"),
    )
    return _kafka_events(records), rejected


def _kafka_events(records: DataFrame) -> DataFrame:
    message, logger = F.col("message"), F.col("logger")
    ident = F.regexp_extract(message, K.IDENT, 1)
    after_ident = F.regexp_replace(message, K.IDENT, "")
    is_state = logger == K.STATE_CHANGE_LOGGER
    old = {k: F.when(is_state, _blank_to_null(F.regexp_extract(after_ident, K.OLD_STATE_PREFIX, g)))
           for k, g in (("controller_id", 1), ("controller_epoch", 2), ("broker_id", 3))}
    from_ident = {"controller_id": K.IDENT_CONTROLLER, "controller_epoch": K.IDENT_EPOCH, "broker_id": K.IDENT_BROKER}
    base = {k: F.coalesce(old[k], _blank_to_null(F.regexp_extract(ident, rx, 1))) for k, rx in from_ident.items()}
    body = F.when(is_state, F.regexp_replace(after_ident, K.OLD_STATE_PREFIX, "")).otherwise(after_ident)
    staged = records.select("*", *(c.alias(f"_base_{k}") for k, c in base.items()), body.alias("body"))
    tid = None
    for i, t in enumerate(K.TEMPLATES):
        matches = F.col("body").rlike(t.pattern)
        if t.needle:  # a substring test is far cheaper than the regex and rules out most templates
            matches = F.col("body").contains(t.needle) & matches
        tid = (tid if tid is not None else F).when(matches, i)
    staged = staged.select("*", tid.otherwise(-1).alias("tid"))
    staged = staged.select("*", _template_parts(F.col("body"), F.col("tid")).alias("parts"))
    found = _template_fields(F.col("body"), F.col("tid"), F.col("parts"))
    kinds = None
    for i, t in enumerate(K.TEMPLATES):
        kinds = (kinds if kinds is not None else F).when(F.col("tid") == i, F.lit(t.kind))
    values: dict[str, Column] = {}
    for name in K.PARSED_FIELDS:
        template_value = found.get(name)
        if name in base:
            values[name] = F.coalesce(template_value, F.col(f"_base_{name}"))
        else:
            values[name] = template_value if template_value is not None else F.lit(None)
    tp = found["tp"]
    values["topic"] = F.coalesce(values["topic"], _blank_to_null(F.regexp_extract(tp, K.TP_SPLIT, 1)))
    values["partition"] = F.coalesce(values["partition"], _blank_to_null(F.regexp_extract(tp, K.TP_SPLIT, 2)))
    int_list = lambda c: F.regexp_extract_all(c, F.lit(K.INT_LIST), 0).try_cast("array<int>")  # noqa: E731
    typed = {
        **{n: values[n].try_cast("int") for n in K.INT_FIELDS},
        **{n: int_list(values[n]) for n in K.LIST_FIELDS},
        "topic": values["topic"], "from_state": values["from_state"], "to_state": values["to_state"],
        "strategy": F.lower(values["strategy"]), "trigger": F.lower(values["trigger"]),
        "clean": values["clean"].cast("boolean"),
    }
    extra = {
        "ts_ms": F.unix_millis("ts"), "source_format": F.lit("kafka_log"),
        "kind": kinds.otherwise(F.lit("other")), "event_name": F.lit(None),
        "queue_time_ms": F.lit(None), "processing_time_ms": F.lit(None),
    }
    columns = {**typed, **extra}
    return staged.select(*(
        (columns[name] if name in columns else F.col(name)).cast(dtype).alias(name) for name, dtype in EVENTS
    ))


def _or_null_text(c: Column) -> Column:
    return F.coalesce(c.cast("string"), F.lit("null"))


def parse_jsonl_lines(lines: DataFrame, cluster: Column) -> tuple[DataFrame, DataFrame]:
    """(events, rejected) from (source_file, line_number, value) lines of our JSONL event log."""
    from zkcontroller.analytics.event_schema import (
        COMMON_REQUIRED,
        RECORD_TYPES,
        SCHEMA_VERSION,
        spark_schema,
    )

    schema = spark_schema().add("_corrupt", "string")
    keep = lines.where(F.trim("value") != "").select(
        "source_file", "line_number", "value", cluster.alias("_path_cluster"),
        F.from_json("value", schema, {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": "_corrupt"}).alias("r"),
    ).select("source_file", "line_number", "value", "_path_cluster", "r.*")
    missing = None
    for rtype, required in RECORD_TYPES.items():
        names = F.concat_ws(", ", *(F.when(F.col(n).isNull(), F.lit(n)) for n in (*COMMON_REQUIRED, *required)))
        missing = (missing if missing is not None else F).when(F.col("type") == rtype, names)
    reason = (
        F.when(F.col("_corrupt").isNotNull() | F.col("type").isNull() & F.col("schema_version").isNull(),
               F.lit("not a JSON object of the event-log schema (bad JSON or wrong field type)"))
        .when(F.col("schema_version").isNull() | (F.col("schema_version") != SCHEMA_VERSION),
              F.concat(F.lit("unsupported schema_version "), _or_null_text(F.col("schema_version"))))
        .when(~F.col("type").isin(*RECORD_TYPES), F.concat(F.lit("unknown type "), _or_null_text(F.col("type"))))
        .when(missing != "", F.concat(F.lit("missing fields: "), missing))
    )
    staged = keep.select("*", reason.alias("reason"))
    rejected = staged.where(F.col("reason").isNotNull()).select(
        F.coalesce("cluster", "_path_cluster").alias("cluster"), "source_file", "line_number",
        F.lit("jsonl").alias("source_format"), "reason",
        F.substring("value", 1, MAX_REJECTED_LINE_CHARS).alias("line"),
    ).select(*REJECTED_COLUMNS)
    membership = F.col("type").isin("broker_failed", "broker_registered")
    columns = {
        "ts": F.timestamp_millis("ts_ms"), "cluster": F.coalesce("cluster", "_path_cluster"),
        "source_format": F.lit("jsonl"), "level": F.lit(None), "logger": F.lit(None), "kind": F.col("type"),
        "brokers": F.when(membership, F.array("broker_id")), "event_name": F.col("event"),
    }
    events = staged.where(F.col("reason").isNull()).select(*(
        (columns[name] if name in columns else F.col(name)).cast(dtype).alias(name) for name, dtype in EVENTS
    ))
    return events, rejected


@dataclass
class Extracted:
    """The extract stage's output: parsed events, rejected lines and the files they came from."""

    events: DataFrame
    rejected: DataFrame
    files: InputFiles


def extract(
    spark: SparkSession, inputs: list[str], cluster: str | None = None, cluster_pattern: str | None = None,
) -> Extracted:
    """Resolve INPUTs (raising InputError for missing/empty ones) and parse every line lazily."""
    files = resolve_inputs(inputs)
    parts: list[tuple[DataFrame, DataFrame]] = []
    if files.kafka:
        lines = read_lines(spark, files.kafka)
        parts.append(parse_kafka_lines(lines, cluster_column(F.col("source_file"), cluster, cluster_pattern)))
    if files.jsonl:
        lines = read_lines(spark, files.jsonl)
        parts.append(parse_jsonl_lines(lines, cluster_column(F.col("source_file"), cluster, cluster_pattern)))
    events, rejected = parts[0]
    for more_events, more_rejected in parts[1:]:
        events, rejected = events.unionByName(more_events), rejected.unionByName(more_rejected)
    return Extracted(events, rejected, files)
