"""Input files: resolve INPUT arguments, name each file's cluster, and cut large files into line-aligned chunks.

Everything here runs on the driver before Spark starts work (and before the JVM starts, for the checks the
CLI makes), so a missing, empty or unreadable input fails at once with the path named. The chunk plan carries each
chunk's first line number, so executors number lines exactly without a join.
"""

from __future__ import annotations

import glob
import itertools
import json
import mmap
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from zkcontroller.analytics.kafka_log_parser import KafkaLogParser

JSONL_SUFFIXES = (".jsonl", ".ndjson", ".json")
COMPRESSED_SUFFIXES = (".gz", ".bz2")
_GLOB_CHARS = set("*?[")
SKIPPED = (".crc", ".parquet", ".html", ".md", ".properties", ".cfg")
"""Never logs, in a directory given as INPUT: an earlier run's output there (``analyze DIR --out DIR/analysis``,
then ``analyze DIR --out ELSEWHERE``) was read as Kafka text and filled rejected_lines with its bytes, and so
was a README beside the logs (833 rejected lines for the shared samples' three .md files), and so were the
config files ``cluster --processes`` writes beside its brokers' logs (``server-N.properties``; ZooKeeper's
``zoo.cfg``). A file named as INPUT is read whatever its name."""
SKIPPED_NAMES = re.compile(r"myid|zookeeper\.out|zk\d+\.out")
"""Files skipped by their whole name, ZooKeeper's that ``cluster --processes`` keeps in its directory: a server's
id file (``--zookeeper-ensemble``) and the servers' own output (no controller line; Kafka's
``zookeeper-server-start.sh -daemon`` names its ``zookeeper.out`` too)."""
SKIPPED_DIRS = ("version-2",)
"""Directories not read: ZooKeeper's transaction logs and snapshots (binary) under its ``dataDir``, which
``cluster --processes`` keeps in its directory when it starts its own ZooKeeper."""
MIN_CHUNK_BYTES = 1 << 20
MAX_CHUNK_BYTES = 64 << 20


CLUSTER_OPTIONS_CONFLICT = ("give either --cluster (one name for every Kafka log line) or --cluster-pattern "
                            "(a name per file path), not both")
"""The usage error for both: one of them would be ignored without a word."""


class InputError(Exception):
    """An input path that is missing or holds nothing to read; the message names the path."""


@dataclass
class InputFiles:
    """Resolved input files (absolute paths), split by format (JSONL event log or Kafka log4j text)."""

    jsonl: list[str] = field(default_factory=list)
    kafka: list[str] = field(default_factory=list)
    names: dict[str, str] = field(default_factory=dict)
    """Display name of each file: relative to the parent of the directory given as INPUT, or of the file's
    own directory for files and globs (``prod/controller.log``), never absolute."""

    @property
    def all(self) -> list[str]:
        return [*self.jsonl, *self.kafka]


def is_jsonl(path: str) -> bool:
    """JSONL by name: ``.jsonl``/``.ndjson``/``.json``, optionally compressed."""
    name = path.lower()
    for suffix in COMPRESSED_SUFFIXES:
        name = name.removesuffix(suffix)
    return name.endswith(JSONL_SUFFIXES)


def _hidden(name: str) -> bool:
    return name.startswith((".", "_"))


def _files_under(directory: Path) -> list[Path]:
    found = []

    def unreadable(exc: OSError) -> None:  # os.walk skips a directory it cannot list unless told otherwise
        raise InputError(f"{exc.filename}: cannot read ({exc.strerror or exc})") from exc

    for root, dirs, files in os.walk(directory, onerror=unreadable):
        dirs[:] = sorted(d for d in dirs if not _hidden(d) and d not in SKIPPED_DIRS)
        found += [Path(root) / f for f in sorted(files)
                  if not _hidden(f) and not f.endswith(SKIPPED) and not SKIPPED_NAMES.fullmatch(f)]
    return found


def _nothing_to_read(raw: str, directory: Path) -> str:
    """Why a directory yields no input: empty, or only files that are skipped (saying "contains no files" of a
    directory holding ``.x`` sent the user looking for files that were there)."""
    skipped = sorted(str((Path(root) / f).relative_to(directory)) for root, _, files in os.walk(directory)
                     for f in files)
    if not skipped:
        return f"{raw}: directory contains no files"
    shown = ", ".join(skipped[:3]) + (f" and {len(skipped) - 3} more" if len(skipped) > 3 else "")
    if all(any(_hidden(part) for part in Path(name).parts) for name in skipped):
        return f"{raw}: directory holds only hidden files ({shown}), which are skipped: name the file to read it"
    return (f"{raw}: directory holds only files that are skipped (hidden, or {'/'.join(SKIPPED)}): {shown}; "
            "name the file to read it")


def resolve_inputs(inputs: list[str], exclude: Path | None = None) -> InputFiles:
    """Expand files, directories (recursively) and globs; every INPUT must yield a non-empty file.

    ``exclude`` (the output directory) is skipped, so ``analyze DIR --out DIR/analysis`` never reads its
    own earlier output.
    """
    if not inputs:
        raise InputError("no INPUT given")
    skip = str(exclude.resolve()) + os.sep if exclude is not None else None
    resolved = InputFiles()
    seen: set[str] = set()
    for raw in inputs:
        path = Path(raw)
        if path.is_dir():
            candidates = _files_under(path)
            if not candidates:
                raise InputError(_nothing_to_read(raw, path))
        elif path.is_file():
            candidates = [path]
        elif path.exists():  # a device, FIFO or socket: there, but no log file
            raise InputError(f"{raw}: not a regular file or directory")
        elif _GLOB_CHARS & set(raw):
            candidates = [Path(p) for p in sorted(glob.glob(raw, recursive=True)) if Path(p).is_file()]
            if not candidates:
                raise InputError(f"{raw}: no file matches this pattern")
        else:
            raise InputError(f"{raw}: no such file or directory")
        kept = [p for p in candidates if skip is None or not str(p.resolve()).startswith(skip)]
        if candidates and not kept:  # not "input is empty": its files are there, but in --out
            raise InputError(f"{raw}: inside the output directory {exclude}, which is never read as input")
        candidates = kept
        non_empty = [p for p in candidates if p.stat().st_size > 0]
        if not non_empty:
            raise InputError(f"{raw}: input is empty")
        for p in non_empty:
            _check_readable(p)
        base = path.resolve().parent
        for p in non_empty:
            key = str(p.resolve())
            if key not in seen:
                seen.add(key)
                (resolved.jsonl if is_jsonl(key) else resolved.kafka).append(key)
                resolved.names[key] = os.path.relpath(key, base if path.is_dir() else p.resolve().parent.parent)
    return resolved


def _check_readable(path: Path) -> None:
    """Open ``path`` once, so a file without read permission fails here, named, not in a Spark task."""
    try:
        with open(path, "rb"):
            pass
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from exc


@dataclass(frozen=True)
class SourceFile:
    """One input file: absolute path, display name (relative), format and (Kafka text) cluster name."""

    path: str
    name: str
    fmt: str
    cluster: str | None
    runs: tuple[tuple[int, str], ...] = ()
    """Kafka text in a directory that several clusters' runs wrote (``Cluster ID`` lines of more than one id):
    ``(start_ms, cluster)`` in ascending ``start_ms``; a line stamped at or after a start belongs to the latest such
    start's cluster, a line before the first (or without a time) to ``cluster``. Empty for all other files."""


@dataclass(frozen=True)
class Chunk:
    """Bytes [start, end) of a file, beginning at a line start; ``end`` -1 means to the end (compressed)."""

    path: str
    name: str
    fmt: str
    cluster: str | None
    start: int
    end: int
    first_line: int


def jsonl_cluster(path: str) -> str | None:
    """The ``cluster`` of the first readable record of an event log (it names the cluster, not its folder)."""
    import gzip

    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8", errors="replace") as f:
            for _, line in zip(range(100), f, strict=False):
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if isinstance(record, dict) and isinstance(record.get("cluster"), str):
                    return record["cluster"]
    except (OSError, EOFError):
        return None
    return None


def cluster_pattern(value: str) -> str:
    """``value`` if it is a regex with a group 1, else ValueError: a bad one crashed the job (re.error), and one
    without a group was silently ignored."""
    try:
        pattern = re.compile(value)
    except re.error as exc:
        raise ValueError(f"{value!r} is not a valid regular expression ({exc})") from exc
    if pattern.groups < 1:
        raise ValueError(f"{value!r} has no group: group 1 names the cluster, e.g. '/logs/([^/]+)/'")
    return value


def plan_sources(files: InputFiles, cluster: str | None = None, cluster_pattern: str | None = None,
                 warnings: list[str] | None = None) -> list[SourceFile]:
    """Name every file's cluster. Kafka text: ``cluster``, else group 1 of ``cluster_pattern`` on the path,
    else the cluster named by an event log in the same directory (the two describe one run), else the parent
    directory's name. Event logs name their own cluster in every record.

    Files named by the last two rules in a directory whose ``Cluster ID`` lines name more than one cluster id
    (runs of different clusters appended to one ``--log-dir``) also get ``runs`` (``directory_runs``); what
    makes those ambiguous is appended to ``warnings``."""
    pattern = re.compile(cluster_pattern) if cluster_pattern else None
    by_dir: dict[str, str] = {}
    for path in files.jsonl:
        name = jsonl_cluster(path)
        if name is not None:
            by_dir.setdefault(os.path.dirname(path), name)
    sources = [SourceFile(p, files.names[p], "jsonl", None) for p in files.jsonl]
    by_default: dict[str, list[str]] = {}
    for path in files.kafka:
        named = cluster
        if named is None and pattern is not None:
            m = pattern.search(path)
            named = m.group(1) if m and m.groups() and m.group(1) else None
        if named is None:
            by_default.setdefault(os.path.dirname(path), []).append(path)
            named = by_dir.get(os.path.dirname(path)) or os.path.basename(os.path.dirname(path)) or "default"
        sources.append(SourceFile(path, files.names[path], "kafka_log", named))
    runs: dict[str, tuple[tuple[int, str], ...]] = {}
    for directory, paths in by_default.items():
        jsonl = [p for p in files.jsonl if os.path.dirname(p) == directory]
        found, said = directory_runs(paths, jsonl, files.names)
        runs.update(dict.fromkeys(paths, found))
        if warnings is not None:
            warnings += said
    return [replace(s, runs=runs.get(s.path, ())) for s in sources]


CLUSTER_ID_TEXT = b"Cluster ID = "
"""What Kafka's ``KafkaServer.startup`` logs once the broker has read (or created) ``/cluster/id``, before it
registers: ``INFO Cluster ID = ID (kafka.server.KafkaServer)``; our brokers log it too."""
_CLUSTER_ID = re.compile(r"\bCluster ID = (\S+)")
CLUSTER_ID_LOGGER = "kafka.server.KafkaServer"


@dataclass(frozen=True)
class ClusterIdLine:
    """One ``Cluster ID = ID`` line: where it is, its time (as the parse reads it) and the id."""

    path: str
    line_number: int
    ts_ms: int
    cluster_id: str
    start_ms: int | None = None
    """The time of the broker's start-up lines just before it (``STARTUP_LINE``: ZooKeeper connecting, Kafka's
    ``starting``), where its run begins; None: no such line, the run begins at this line."""


STARTUP_LINE = re.compile(
    r"\] starting\b|\bstarting \(kafka\.server\.KafkaServer\)|Connecting to zookeeper on |"
    r"Initializing a new session to |Waiting until connected\.|\] Connected\.|KafkaConfig values:|"
    r"Log4jController MBean|jdk\.tls\.rejectClientInitiatedRenegotiation|Client environment:|"
    r"Initiating client connection|Opening socket connection|Socket connection established|"
    r"Session establishment complete|jute\.maxbuffer|zookeeper\.request\.timeout|zookeeper\.clientCnxnSocket|"
    r"Client will use TLS|Client successfully logged in")
"""What a broker logs between its process start (Kafka's ``[KafkaServer id=n] starting``) and ``Cluster ID``:
config, ZooKeeper client set-up and connection. A run's lines before its ``Cluster ID`` line are those; read as
the run before's, they stretched its observed window to the new run's start."""
STARTUP_LOOKBACK_BYTES = 256 << 10
"""How far before a ``Cluster ID`` line its start-up lines are looked for (Kafka's config dump is ~20 KiB)."""


def _startup_ms(parser: KafkaLogParser, before: list[bytes]) -> tuple[int | None, bool]:
    """The time of the earliest of the start-up lines that end ``before`` (the lines above a ``Cluster ID`` line,
    last one last), and whether the walk stopped (at another line, or after ``starting``) rather than ran out of
    lines; lines without a time (a config dump's) belong to the record above."""
    from zkcontroller.analytics.kafka_log_parser import ParsedLine

    earliest = None
    for raw in reversed(before):
        text = raw.decode("utf-8", "replace").rstrip("\r\n")
        parsed = parser.parse_line(0, text)
        if not isinstance(parsed, ParsedLine):
            continue
        if not STARTUP_LINE.search(text):
            return earliest, True
        earliest = parsed.ts_ms
        if parsed.kind == "broker_starting":
            return earliest, True
    return earliest, False


def _startup_ms_above(parser: KafkaLogParser, m: mmap.mmap, start: int) -> int | None:
    """``_startup_ms`` of the lines before byte ``start`` of ``m``: 8 KiB back first (a broker's ZooKeeper set-up
    lines), more only while the walk runs out of lines, up to ``STARTUP_LOOKBACK_BYTES``."""
    size = 8 << 10
    while True:
        window = max(0, start - size)
        above = m[window:start].splitlines()
        earliest, stopped = _startup_ms(parser, above[1:] if window else above)  # [0] may be cut
        if stopped or window == 0 or size >= STARTUP_LOOKBACK_BYTES:
            return earliest
        size *= 2


def cluster_id_lines(path: str) -> list[ClusterIdLine]:
    """A Kafka-format file's ``Cluster ID`` lines, found by a byte search (a memory map for plain files, so a
    large file costs a scan at memory speed, not a parse) and each read by the reference parser, so its time is
    the one Spark's parse gives the lines around it. A line of another logger is not one (a message quoting it)."""
    from zkcontroller.analytics.kafka_log_parser import KafkaLogParser, ParsedLine

    parser = KafkaLogParser()
    hits: list[tuple[int, bytes, int | None]] = []
    if path.endswith(COMPRESSED_SUFFIXES):
        import bz2
        import gzip
        from collections import deque

        opener = gzip.open if path.endswith(".gz") else bz2.open
        recent: deque[bytes] = deque(maxlen=400)
        try:
            with opener(path, "rb") as stream:
                for n, text in enumerate(stream, start=1):
                    if CLUSTER_ID_TEXT in text:
                        hits.append((n, text, _startup_ms(parser, list(recent))[0]))
                    recent.append(text)
        except (OSError, EOFError, ValueError):
            pass  # the parse reports the break as a rejected line; ids before it were kept
    elif os.path.getsize(path) > 0:
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            at, counted, line = m.find(CLUSTER_ID_TEXT), 0, 1
            while at >= 0:
                start = m.rfind(b"\n", 0, at) + 1
                end = m.find(b"\n", at)
                end = len(m) if end < 0 else end
                line += _newlines(m, counted, start)
                counted = start
                hits.append((line, m[start:end], _startup_ms_above(parser, m, start)))
                at = m.find(CLUSTER_ID_TEXT, end)
    found = []
    for number, raw, startup_ms in hits:
        line_text = raw.decode("utf-8", "replace").rstrip("\r\n")
        parsed = parser.parse_line(number, line_text)
        match = _CLUSTER_ID.search(line_text)
        if isinstance(parsed, ParsedLine) and parsed.logger == CLUSTER_ID_LOGGER and match:
            found.append(ClusterIdLine(path, number, parsed.ts_ms, match.group(1), startup_ms))
    return found


def _newlines(m: mmap.mmap, start: int, end: int) -> int:
    """Newlines in ``m[start:end]``, counted a slice of at most MAX_CHUNK_BYTES at a time (bounded memory)."""
    count = 0
    for at in range(start, end, MAX_CHUNK_BYTES):
        count += m[at:min(end, at + MAX_CHUNK_BYTES)].count(b"\n")
    return count


def _event_log_spans(paths: list[str]) -> list[tuple[int, str]]:
    """``(ts_ms, cluster)`` of the first record of each stretch of one cluster in the event logs: where each run's
    records begin, to name a run whose id is not its event log's name (``cluster --cluster-name``)."""
    import gzip

    starts: list[tuple[int, str]] = []
    for path in paths:
        opener = gzip.open if path.endswith(".gz") else open
        last = None
        try:
            with opener(path, "rt", encoding="utf-8", errors="replace") as f:
                for line in f:
                    try:
                        record = json.loads(line)
                    except ValueError:
                        continue
                    if not isinstance(record, dict):
                        continue
                    name, ts = record.get("cluster"), record.get("ts_ms")
                    if isinstance(name, str) and isinstance(ts, int) and name != last:
                        starts.append((ts, name))
                        last = name
        except (OSError, EOFError):
            continue
    return sorted(starts)


def directory_runs(kafka: list[str], jsonl: list[str], names: dict[str, str],
                   ) -> tuple[tuple[tuple[int, str], ...], list[str]]:
    """The runs of different clusters in one directory's Kafka-format files, from their ``Cluster ID`` lines.

    Two runs given one ``--log-dir`` (``demo`` then ``cluster``, each on its own embedded store) append to the
    same files, and only ``server.log`` says which cluster a stretch is (``controller.log`` and
    ``state-change.log`` never do), so the runs are cut by time, over the whole directory: a run starts at the
    first ``Cluster ID`` line of an id other than the one before it (lines sorted by time), and holds every line
    of the directory stamped from then until the next run's start. A run is named by the event log's cluster
    equal to its id (our runs' default name), else by the event log cluster whose records begin within the run
    (``--cluster-name``), else by the id. One id in the directory (a single run, or runs of one cluster on one
    ZooKeeper) gives no runs: the file's cluster stands, as before. An id that comes back after another is
    reported (``FILE:LINE``): if those runs overlapped in time (two clusters writing at once), the cut by time
    gives lines of one to the other."""
    marks = sorted((m for path in kafka for m in cluster_id_lines(path)), key=lambda m: (m.ts_ms, m.path,
                                                                                             m.line_number))
    if len({m.cluster_id for m in marks}) < 2:
        return (), []
    starts: list[ClusterIdLine] = []
    for m in marks:
        if not starts or starts[-1].cluster_id != m.cluster_id:
            starts.append(m)
    warnings = []
    seen: dict[str, ClusterIdLine] = {}
    for before, m in itertools.pairwise(starts):
        seen.setdefault(before.cluster_id, before)
        if m.cluster_id in seen:
            warnings.append(
                f"{names.get(m.path, m.path)}:{m.line_number}: Cluster ID {m.cluster_id} again after "
                f"{before.cluster_id} ({names.get(before.path, before.path)}:{before.line_number}): the lines of "
                "this directory are given to the cluster of the latest Cluster ID line before them, which is "
                "wrong where the two clusters wrote at the same time; give each run its own --log-dir, named "
                "with --cluster-pattern")
    spans = _event_log_spans(jsonl)
    named = {name for _, name in spans}
    runs = []
    for i, m in enumerate(starts):
        until = starts[i + 1].ts_ms if i + 1 < len(starts) else None
        begun = [name for ts, name in spans if ts >= m.ts_ms and (until is None or ts < until)]
        start = m.ts_ms if m.start_ms is None or i == 0 else max(m.start_ms, starts[i - 1].ts_ms)
        runs.append((start, m.cluster_id if m.cluster_id in named else begun[0] if begun else m.cluster_id))
    return tuple(runs), warnings


def chunk_size(total_bytes: int, parallelism: int) -> int:
    """About four chunks per core, between 1 and 64 MiB: enough tasks to balance, few enough to be cheap."""
    return max(MIN_CHUNK_BYTES, min(MAX_CHUNK_BYTES, total_bytes // max(1, 4 * parallelism) + 1))


def plan_chunks(sources: list[SourceFile], parallelism: int, target: int | None = None) -> list[Chunk]:
    """Cut uncompressed files at line starts near every ``target`` bytes; each chunk knows its first line.

    Newlines before each cut are counted here with ``bytes.count`` over a memory map (several GB/s), which
    is what lets executors give exact line numbers. A compressed file is one chunk.
    """
    sizes = {s.path: os.path.getsize(s.path) for s in sources}
    step = target or chunk_size(sum(sizes.values()), parallelism)
    chunks: list[Chunk] = []
    for s in sources:
        size = sizes[s.path]
        if s.path.endswith(COMPRESSED_SUFFIXES) or size <= step:
            chunks.append(Chunk(s.path, s.name, s.fmt, s.cluster, 0, -1, 1))
            continue
        with open(s.path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            start, line = 0, 1
            while start < size:
                cut = m.find(b"\n", min(start + step, size) - 1)
                end = size if cut < 0 else cut + 1
                chunks.append(Chunk(s.path, s.name, s.fmt, s.cluster, start, end, line))
                line += m[start:end].count(b"\n")
                start = end
    return chunks
