"""Input files: resolve INPUT arguments, name each file's cluster, and cut large files into line-aligned chunks.

Everything here runs on the driver before Spark starts work (and before the JVM starts, for the checks the
CLI makes), so a missing, empty or unreadable input fails at once with the path named. The chunk plan carries each
chunk's first line number, so executors number lines exactly without a join.
"""

from __future__ import annotations

import glob
import json
import mmap
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

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
                 ) -> list[SourceFile]:
    """Name every file's cluster. Kafka text: ``cluster``, else group 1 of ``cluster_pattern`` on the path,
    else the cluster named by an event log in the same directory (the two describe one run), else the parent
    directory's name. Event logs name their own cluster in every record."""
    pattern = re.compile(cluster_pattern) if cluster_pattern else None
    by_dir: dict[str, str] = {}
    for path in files.jsonl:
        name = jsonl_cluster(path)
        if name is not None:
            by_dir.setdefault(os.path.dirname(path), name)
    sources = [SourceFile(p, files.names[p], "jsonl", None) for p in files.jsonl]
    for path in files.kafka:
        named = cluster
        if named is None and pattern is not None:
            m = pattern.search(path)
            named = m.group(1) if m and m.groups() and m.group(1) else None
        if named is None:
            named = by_dir.get(os.path.dirname(path)) or os.path.basename(os.path.dirname(path)) or "default"
        sources.append(SourceFile(path, files.names[path], "kafka_log", named))
    return sources


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
