"""Extract: parse every input line once, on the executors, into ``events`` and ``rejected_lines``.

The driver plans line-aligned chunks (``sources.plan_chunks``); each Spark task reads its chunk's bytes and
parses them, so a line is parsed exactly as the reference parser parses it, numbered exactly, and its stack
trace or traceback is folded into the record above. Uncompressed Kafka-format chunks are parsed on the JVM by
default (``jvm_parser``: the same algorithm and templates, no Python workers); event logs, compressed files
and ``parser="python"`` go through the pure-Python parsers inside ``mapInArrow``.
Files that cannot be read to the end (a truncated ``.gz``) and lines that are not UTF-8 become
``rejected_lines`` rows (the bytes kept as ``\\xNN`` escapes); nothing here raises on bad content.
"""

from __future__ import annotations

import bz2
import gzip
import json
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from zkcontroller.analytics import jvm_parser, tables
from zkcontroller.analytics.kafka_log_parser import KafkaLogParser, ParsedLine
from zkcontroller.analytics.sources import (
    COMPRESSED_SUFFIXES,
    Chunk,
    InputError,
    InputFiles,
    SourceFile,
    plan_chunks,
    plan_sources,
    resolve_inputs,
)
from zkcontroller.event_schema import COMMON_REQUIRED, FIELD_NAMES, RECORD_TYPES, SCHEMA_VERSION, validate_record

__all__ = ["PARSERS", "Extracted", "InputError", "extract", "resolve_inputs"]

OK, REJECTED = "ok", "rejected"
PARSERS = ("jvm", "python")
BATCH_ROWS = 8192
STAGED: tuple[tuple[str, str], ...] = (
    ("status", "string"), ("reason", "string"), ("line", "string"),
    *((n, t) for n, t in tables.EVENTS if n != "ts"),
)
"""What a parse task emits per line: status, rejection reason and text, and the event columns (``ts`` is
derived from ``ts_ms`` in Spark). An ok row's ``reason`` is a warning (a log-ident id left null: ``job.
line_warnings``), else null."""
REASON_BAD_JSON = "not a JSON object of the event-log schema (bad JSON or wrong field type)"
REASON_NOT_UTF8 = "not valid UTF-8 (undecodable bytes kept as \\xNN escapes)"
MEMBERSHIP = ("broker_failed", "broker_registered")

JSONL_RENAMED: dict[str, str] = {"type": "kind", "event": "event_name"}
"""Event-log fields whose ``events`` column has another name: ``kind`` is shared with Kafka-format lines, and
``event`` alone would read as the row itself."""
JSONL_DROPPED: dict[str, str] = {"schema_version": "checked by jsonl_reason: a row read always has version 1"}
"""Event-log fields no column holds, and why."""
JSONL_COLUMNS: tuple[tuple[str, str], ...] = tuple(
    (name, JSONL_RENAMED.get(name, name)) for name in FIELD_NAMES if name not in JSONL_DROPPED)
"""(event-log field, ``events`` column) for every field of the contract but the dropped ones: a JSONL row takes
exactly these, so a field the contract gains reaches its column (``test_event_columns`` fails until
``tables.EVENTS`` has it), and a field the contract does not know never does (``added_brokers: "x"`` would stop
the job at its Arrow conversion: only the contract's fields are type-checked)."""


def _arrow_schema() -> Any:
    import pyarrow as pa

    types = {"string": pa.string(), "bigint": pa.int64(), "int": pa.int32(), "boolean": pa.bool_(),
             "array<int>": pa.list_(pa.int32())}
    return pa.schema([(name, types[dtype]) for name, dtype in STAGED])


class _Batch:
    """Column lists of one output batch."""

    def __init__(self) -> None:
        self.cols: dict[str, list[object]] = {name: [] for name, _ in STAGED}
        self.rows = 0

    def add(self, values: dict[str, object]) -> None:
        for name, column in self.cols.items():
            column.append(values.get(name))
        self.rows += 1

    def to_arrow(self, schema: Any) -> Any:
        import pyarrow as pa

        return pa.RecordBatch.from_pydict(self.cols, schema=schema)


def _chunk_lines(chunk: dict[str, Any], problems: list[str]) -> Iterator[bytes]:
    """The raw lines of a chunk; a compressed stream that breaks off adds a problem and ends the lines."""
    path = chunk["path"]
    if chunk["end"] < 0 and path.endswith((".gz", ".bz2")):
        opener = gzip.open if path.endswith(".gz") else bz2.open
        count = 0
        try:
            with opener(path, "rb") as f:
                for count, line in enumerate(f, start=1):  # noqa: B007 - count is read after the loop
                    yield line
        except (EOFError, OSError, zlib.error) as exc:
            problems.append(f"compressed file unreadable after line {count}: {exc}")
        return
    with open(path, "rb") as f:
        f.seek(chunk["start"])
        data = f.read() if chunk["end"] < 0 else f.read(chunk["end"] - chunk["start"])
    yield from data.splitlines()


def _decoded(raw: Iterator[bytes], first_line: int, bad: dict[int, str]) -> Iterator[str]:
    """Lines as text; a line that is not UTF-8 is blanked for the parser and kept, escaped, in ``bad``."""
    for number, line in enumerate(raw, start=first_line):
        try:
            yield line.decode("utf-8")
        except UnicodeDecodeError:
            bad[number] = line.decode("utf-8", "backslashreplace")
            yield ""


def _kafka_rows(chunk: dict[str, Any], parser: KafkaLogParser) -> Iterator[dict[str, object]]:
    problems: list[str] = []
    bad: dict[int, str] = {}
    base = {"cluster": chunk["cluster"], "source_file": chunk["name"], "source_format": "kafka_log"}
    last = chunk["first_line"] - 1
    for r in parser.parse_lines(_decoded(_chunk_lines(chunk, problems), chunk["first_line"], bad),
                                chunk["first_line"]):
        last = max(last, r.line_number)
        if isinstance(r, ParsedLine):
            yield {**base, **r.fields, "status": OK, "line_number": r.line_number, "ts_ms": r.ts_ms,
                   "level": r.level, "logger": r.logger, "kind": r.kind, "exception": r.exception,
                   "reason": r.warning}
        else:
            yield {**base, "status": REJECTED, "line_number": r.line_number, "reason": r.reason,
                   "line": r.line[:tables.MAX_REJECTED_LINE_CHARS]}
    yield from _bad_rows(base, bad, problems, last + 1)


def _bad_rows(base: dict[str, object], bad: dict[int, str], problems: list[str], next_line: int,
              ) -> Iterator[dict[str, object]]:
    for number, text in bad.items():
        yield {**base, "status": REJECTED, "line_number": number, "reason": REASON_NOT_UTF8,
               "line": text[:tables.MAX_REJECTED_LINE_CHARS]}
    for problem in problems:
        yield {**base, "status": REJECTED, "line_number": next_line, "reason": problem, "line": None}


def jsonl_reason(record: object) -> str | None:
    """Why a decoded JSONL value is not an event of the contract (None: it is one); unknown fields pass."""
    if not isinstance(record, dict):
        return REASON_BAD_JSON
    if record.get("schema_version") != SCHEMA_VERSION:
        return f"unsupported schema_version {json.dumps(record.get('schema_version'))}"
    rtype = record.get("type")
    if rtype not in RECORD_TYPES:
        return f"unknown type {json.dumps(rtype)}"
    missing = [n for n in (*COMMON_REQUIRED, *RECORD_TYPES[rtype]) if record.get(n) is None]
    if missing:
        return f"missing fields: {', '.join(missing)}"
    problems = validate_record(record)
    if any(" must be " in p for p in problems):
        return REASON_BAD_JSON
    # a number the job's columns cannot hold would stop the whole job at its Arrow conversion, not this line
    return next((p for p in problems if " out of range " in p), None)


def _jsonl_rows(chunk: dict[str, Any]) -> Iterator[dict[str, object]]:
    problems: list[str] = []
    bad: dict[int, str] = {}
    base = {"source_file": chunk["name"], "source_format": "jsonl"}
    number = chunk["first_line"] - 1
    for number, text in enumerate(_decoded(_chunk_lines(chunk, problems), chunk["first_line"], bad),
                                  start=chunk["first_line"]):
        if not text.strip():
            continue
        try:
            record = json.loads(text)
        except ValueError:
            record = None
        reason = jsonl_reason(record)
        if reason is not None:
            yield {**base, "status": REJECTED, "line_number": number, "reason": reason,
                   "line": text[:tables.MAX_REJECTED_LINE_CHARS]}
            continue
        assert isinstance(record, dict)
        kind = record["type"]
        yield {**{column: record.get(name) for name, column in JSONL_COLUMNS}, **base, "status": OK,
               "line_number": number, "brokers": [record["broker_id"]] if kind in MEMBERSHIP else None}
    yield from _bad_rows({**base, "cluster": None}, bad, problems, number + 1)


def parse_chunks(batches: Iterator[Any]) -> Iterator[Any]:
    """``mapInArrow`` body: chunk rows in, one row per record or rejected line out (never raises on content)."""
    schema = _arrow_schema()
    parser = KafkaLogParser()
    for batch in batches:
        for chunk in batch.to_pylist():
            rows = _jsonl_rows(chunk) if chunk["fmt"] == "jsonl" else _kafka_rows(chunk, parser)
            out = _Batch()
            for row in rows:
                out.add(row)
                if out.rows >= BATCH_ROWS:
                    yield out.to_arrow(schema)
                    out = _Batch()
            if out.rows:
                yield out.to_arrow(schema)


def _ddl(columns: tuple[tuple[str, str], ...]) -> str:
    return ", ".join(f"`{name}` {dtype}" for name, dtype in columns)


@dataclass
class Extracted:
    """The extract stage's output: one parse (persisted unless asked not to), split into events and rejected lines."""

    events: DataFrame
    rejected: DataFrame
    sources: list[SourceFile]
    chunks: list[Chunk]
    parsed: DataFrame
    parser: str = "python"
    """The parser that read the Kafka-format chunks (``jvm`` unless asked otherwise or unavailable)."""
    warnings: list[str] = field(default_factory=list)

    def release(self) -> None:
        self.parsed.unpersist()


def on_jvm(chunk: Chunk) -> bool:
    """Chunks the JVM parser reads: uncompressed Kafka-format text (Python keeps event logs and .gz/.bz2, whose
    error messages and partial reads are Python's own)."""
    return chunk.fmt == "kafka_log" and not chunk.path.endswith(COMPRESSED_SUFFIXES)


def chunk_dicts(chunks: list[Chunk]) -> list[dict[str, object]]:
    return [{"path": c.path, "name": c.name, "fmt": c.fmt, "cluster": c.cluster, "start": c.start, "end": c.end,
             "first_line": c.first_line} for c in chunks]


def run_cluster(sources: list[SourceFile]) -> Column | None:
    """The ``cluster`` of each parsed row where a directory holds several clusters' runs (``SourceFile.runs``):
    the run its ``ts_ms`` falls in, for rows of those files; None when no file has runs (the chunk's name stands).

    A CASE over the row's file and time, a few branches per such directory: no join, no sort, no shuffle. Rows are
    told apart by file as the tables do, by display name and the file's own cluster."""
    groups: dict[tuple[tuple[int, str], ...], list[tuple[str, str | None]]] = {}
    for s in sources:
        if s.runs:
            groups.setdefault(s.runs, []).append((s.name, s.cluster))
    if not groups:
        return None
    ts, cluster = F.col("ts_ms"), F.col("cluster")
    picked: Column | None = None
    for runs, files in groups.items():
        of_files = F.lit(False)
        for name, named in files:
            of_files = of_files | ((F.col("source_file") == name) & (cluster == F.lit(named)))
        in_run: Column | None = None
        for start, name in reversed(runs):  # the latest start at or before the line's time
            when = F.when(ts >= F.lit(start), F.lit(name))
            in_run = when if in_run is None else in_run.when(ts >= F.lit(start), F.lit(name))
        assert in_run is not None
        branch = (F.col("source_format") == "kafka_log") & of_files
        value = in_run.otherwise(cluster)
        picked = F.when(branch, value) if picked is None else picked.when(branch, value)
    assert picked is not None
    return picked.otherwise(cluster)


def python_parse(spark: SparkSession, chunks: list[Chunk]) -> DataFrame:
    """Staged rows of ``chunks`` parsed by the pure-Python parsers in ``mapInArrow``."""
    rows = [(c.path, c.name, c.fmt, c.cluster, c.start, c.end, c.first_line) for c in chunks]
    plan = spark.createDataFrame(  # one chunk per task: parallelize slices a list evenly
        spark.sparkContext.parallelize(rows, len(rows)),
        "path string, name string, fmt string, cluster string, start bigint, end bigint, first_line bigint")
    return plan.mapInArrow(parse_chunks, _ddl(STAGED))


def extract(spark: SparkSession, files: InputFiles, cluster: str | None = None, cluster_pattern: str | None = None,
            chunk_bytes: int | None = None, parser: str = "jvm", persist: bool = True) -> Extracted:
    """Plan chunks for the resolved files and parse them lazily: once when ``persist`` (the parse is persisted),
    else once per action that reads it.

    ``parser="jvm"`` falls back to Python, with one warning, when the JVM parser cannot be built or loaded.
    """
    from pyspark import StorageLevel

    if parser not in PARSERS:
        raise ValueError(f"parser must be one of {PARSERS}, not {parser!r}")
    warnings: list[str] = []
    sources = plan_sources(files, cluster, cluster_pattern, warnings)
    chunks = plan_chunks(sources, spark.sparkContext.defaultParallelism, chunk_bytes)
    jvm_chunks = [c for c in chunks if on_jvm(c)] if parser == "jvm" else []
    if jvm_chunks:
        why = jvm_parser.available(spark)
        if why is not None:
            warnings.append(f"JVM parser unavailable, parsing with Python (much slower): {why}")
            jvm_chunks, parser = [], "python"
    python_chunks = [c for c in chunks if not (jvm_chunks and on_jvm(c))]
    frames = []
    if jvm_chunks:
        frames.append(jvm_parser.parse(spark, chunk_dicts(jvm_chunks)))
    if python_chunks:
        frames.append(python_parse(spark, python_chunks))
    staged = frames[0] if len(frames) == 1 else frames[0].unionByName(frames[1])
    runs = run_cluster(sources)
    if runs is not None:
        staged = staged.withColumn("cluster", runs)
    # as cache(): scans need not deserialize it
    parsed = staged.persist(StorageLevel.MEMORY_AND_DISK_DESER) if persist else staged
    events = parsed.where(F.col("status") == OK).select(*(
        F.timestamp_millis("ts_ms").alias("ts") if name == "ts" else F.col(name) for name, _ in tables.EVENTS))
    rejected = parsed.where(F.col("status") == REJECTED).select(*tables.REJECTED_COLUMNS)
    return Extracted(events, rejected, sources, chunks, parsed, parser if jvm_chunks else "python", warnings)
