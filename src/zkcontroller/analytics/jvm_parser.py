"""The Kafka-format parse on the JVM: the Java sources in ``jvm/``, built into a jar on first use, fed the
Python parser's own templates and layout regexes as JSON.

Parsing in Python workers costs a Python process per core and an Arrow round trip per row; the same
algorithm in Java runs inside Spark's executors. The Java side holds only the algorithm
(``KafkaLineParser.java`` mirrors ``KafkaLogParser.parse_lines`` and ``extract._kafka_rows``): templates,
regexes, reasons and columns all come from ``kafka_log_parser``/``extract`` (``config_json``), so there is one
source of truth, and a differential test checks both paths give identical rows.

Its fast path (on unless ``config_json(fast_path=False)``) decides the commonest shapes by hand: the log4j
layout, the log ident, tp splits, int lists, ``^HEAD.*TAIL`` templates (``split_at_dot_star``), literal-then-
group extras (``literals_then_group``) and the templates of ``HAND_TEMPLATES`` (state changes...), and runs the
regexes in ASCII-class form on plain lines. Where it is unsure the regexes decide, so the rows stay the same;
``HAND_WRITTEN`` and ``HAND_TEMPLATES`` pin the patterns written out in Java, and a test runs both paths over
every log the suite has.

Python's ``re`` classes are Unicode-aware (``\\d`` is any decimal digit, ``\\s`` any ``str.isspace``
character), Java's are ASCII by default: ``java_regex`` spells Python's classes out. The jar is compiled with
``javac`` against the jars PySpark ships, cached under ``~/.cache/zkcontroller/jvm/`` by a hash of the sources
and the PySpark version, and handed to Spark as ``spark.jars`` (so executors of a standalone cluster get it);
a session that is already running without it gets it loaded on first use (``available``).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from zkcontroller.analytics import kafka_log_parser as k
from zkcontroller.analytics import tables

SOURCES = Path(__file__).with_name("jvm")
ENTRY_CLASS = "zkcontroller.jvm.KafkaChunks"
JAVA_RELEASE = "17"

# Python's \w is str.isalnum() or "_": letters, decimal digits and other numbers. Java's categories say the
# same up to the Unicode versions the two runtimes ship (a difference only for newly assigned characters).
_WORD_NON_ASCII = r"\p{L}\p{Nd}\p{Nl}\p{No}"


@functools.cache
def _spaces() -> str:
    """Every character Python's ``\\s`` (and ``str.isspace``) accepts; none lies above the BMP."""
    space = re.compile(r"\s")
    return "".join(chr(c) for c in range(0x10000) if space.match(chr(c)))


def _ranges(chars: Iterable[str]) -> str:
    """A class body of ``chars`` as ranges (``\\x{9}-\\x{D}``...): Java tests each range in turn."""
    codes = sorted(map(ord, chars))
    out, i = [], 0
    while i < len(codes):
        j = i
        while j + 1 < len(codes) and codes[j + 1] == codes[j] + 1:
            j += 1
        out.append(f"\\x{{{codes[i]:X}}}" + (f"-\\x{{{codes[j]:X}}}" if j > i else ""))
        i = j + 1
    return "".join(out)


def _fast_body(ascii_part: str, non_ascii: str) -> str:
    """A class body that settles ASCII with one bit-table lookup (Java chains the other members one by one)."""
    return f"{ascii_part}[\\x{{80}}-\\x{{10FFFF}}&&[{non_ascii}]]"


def _class_body(name: str) -> str:
    """Class body with Python's meaning of ``\\d``, ``\\w`` or ``\\s``."""
    if name == "d":
        return _fast_body("0-9", r"\p{Nd}")
    if name == "w":
        return _fast_body("0-9A-Za-z_", _WORD_NON_ASCII)
    spaces = _spaces()
    return _fast_body(_ranges(c for c in spaces if c < "\x80"), _ranges(c for c in spaces if c >= "\x80"))


def java_regex(pattern: str, plain: bool = False) -> str:
    """``pattern`` (Python ``re`` syntax, the subset the templates use) with the same meaning in Java.

    ``\\d``, ``\\w``, ``\\s`` (and negations) become explicit Unicode classes, ``\\b`` a lookaround on
    Python's word class; compile the result with ``Pattern.UNIX_LINES`` so ``.`` and ``$`` treat only
    ``\\n`` as a line end, as Python does. Raises ValueError on syntax whose meanings differ (a bare ``[``
    inside a class is a nested class in Java, a literal in Python).

    ``plain=True`` gives the variant for *plain* lines only (ASCII without U+001C-U+001F, see
    ``KafkaLineParser``): there Java's own ASCII ``\\d``, ``\\w`` and ``\\s`` (one table lookup each) accept
    exactly the characters Python's do, so the variant matches exactly what the full one matches.
    """
    if plain:
        body = {c: f"\\{c}" for c in "dws"}
        inside = {**body, **{c.upper(): f"\\{c.upper()}" for c in "dws"}}
        outside = dict(inside)
    else:
        body = {c: _class_body(c) for c in "dws"}
        inside = {**body, **{c.upper(): f"[^{b}]" for c, b in body.items()}}
        outside = {**{c: f"[{b}]" for c, b in body.items()}, **{c.upper(): f"[^{b}]" for c, b in body.items()}}
    word = outside["w"]
    outside["b"] = f"(?:(?<={word})(?!{word})|(?<!{word})(?={word}))"
    out: list[str] = []
    i, in_class = 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            nxt = pattern[i + 1]
            table = inside if in_class else outside
            if nxt in table:
                out.append(table[nxt])
            elif nxt.isalnum() and nxt not in "tnrfv":
                raise ValueError(f"escape \\{nxt} has no checked Java equivalent in {pattern!r}")
            else:
                out.append(c + nxt)
            i += 2
            continue
        if in_class:
            if c == "[" or pattern.startswith("&&", i):
                raise ValueError(f"'{c}' inside a character class means something else in Java: {pattern!r}")
            if c == "]":
                in_class = False
        elif c == "[":
            in_class = True
            out.append(c)
            i += 1
            if pattern.startswith("^", i):
                out.append("^")
                i += 1
            if pattern.startswith("]", i):
                raise ValueError(f"a class starting with ']' means something else in Java: {pattern!r}")
            continue
        out.append(c)
        i += 1
    return "".join(out)


HAND_WRITTEN = {
    "LAYOUT_HEAD": r"^\[?(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d)(?:[,.](\d{3})\d*)?(Z|[+-]\d\d:?\d\d)?\]?\s+"
                   r"(TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL)\s+",
    "LAYOUT_LOGGER": r"\(([A-Za-z_$][\w.$-]*)(?::\d+)?\)",
    "LAYOUT": k.LAYOUT_HEAD + r"(.*?)\s*" + k.LAYOUT_LOGGER + r"(?:\s+\[[^\]]*\])?\s*$",
    "PY_TRACEBACK": r"^(?:[ |+]*(?:Exception Group )?Traceback \(most recent call last\):"
                    r"|During handling of the above exception|The above exception was the direct cause)",
    "JAVA_EXCEPTION": r"^[a-zA-Z_$][\w$]*(?:\.[\w$]+)+(?:Exception|Error|Throwable)\b",
    "CONTINUATION": r"^(?:\s+at |\s*\.\.\. \d+ more|\s*Caused by: |\s*Suppressed: |\s*\([\w.$]+\)\s*$"
                    r"|[a-zA-Z_$][\w$]*(?:\.[\w$]+)+(?:Exception|Error|Throwable)\b)",
    "IDENT": r"^\[([^\]]*)\][:,]? ?",
    "IDENT_CONTROLLER": r"(?:[Cc]ontroller(?:Id=| id=| |-)|^Topic Deletion Manager )(\d+)",
    "IDENT_EPOCH": r"epoch=(-?\d+)",
    "IDENT_BROKER": r"^(?:Broker id=|KafkaServer id=|BrokerServer id=|Kafka Server )(\d+)",
    "TP_SPLIT": r"^\[?(.+)[,-](\d+)\]?$",
    "INT_LIST": r"-?\d+",
}
"""The patterns ``KafkaLineParser``'s fast path implements by hand (or skips on a first character): exactly
these, so a change to one of them in ``kafka_log_parser`` fails ``config_json`` until the Java follows."""

_TP = r"(\[[^\],\s]+,\d+\]|[^\s\[\]]+-\d+)"
HAND_TEMPLATES = {
    rf"^[Cc]hanged partition {_TP} (?:state )?from (\w+) to (\w+)": 1,
    rf"^[Cc]hanged state of replica (\d+) for partition {_TP} from (\w+) to (\w+)": 2,
    r"^(?:[Hh]andling|[Cc]ompleted) LeaderAndIsr request correlationId \d+ from controller (\d+)(?: epoch (-?\d+))?":
    3,
    r"^(?:[Cc]ached leader info .*|Add \d+ partitions and deleted \d+ partitions from metadata cache"
    r"|Deleted partition \S+ from metadata cache) in response to UpdateMetadata request sent by "
    r"controller (\d+) epoch (-?\d+)": 4,
}
"""Template patterns ``KafkaLineParser.handMatch`` decides by hand on plain bodies, by shape number: matched by the
whole pattern, so a template changed in ``kafka_log_parser`` just loses its fast path (a test says when)."""


@functools.cache
def config_json(fast_path: bool = True) -> str:
    """Everything the Java parser needs, from the Python parser's own definitions.

    ``fast_path=False`` turns off the parser's hand-written scanning and the plain-line regex variants
    (``KafkaLineParser``'s regex-only path): the same rows, slower; kept so a test can prove the first.
    """
    from zkcontroller.analytics import extract as x

    def find(pattern: str) -> dict[str, object]:
        """A pattern Java runs with find(): it skips to the first of its literal prefixes (when known), and a
        one-character lookahead speeds up the scan from there."""
        return {"pattern": java_regex(k.fast_search(pattern)), "plain": java_regex(k.fast_search(pattern), True),
                "prefixes": list(k.literal_prefixes(pattern)), "anchored": anchored(pattern),
                "alternatives": literals_then_group(pattern)}

    templates = [{"kind": t.kind, "pattern": java_regex(t.pattern), "plain": java_regex(t.pattern, True),
                  "split": split_at_dot_star(t.pattern), "anchored": anchored(t.pattern), "groups": t.groups,
                  "extra": {name: find(rx) for name, rx in t.extra.items()}, "consts": t.consts,
                  "starts": list(t.starts), "needle": t.needle, "hand": HAND_TEMPLATES.get(t.pattern, 0),
                  "loose": java_regex(t.loose) if t.loose else None,
                  "loose_extra": {name: java_regex(rx) for name, rx in t.loose_extra.items()}}
                 for t in k.TEMPLATES]
    # The layout's message is the lazy gap between a head and a tail that starts with `\s*\(`: Java finds the
    # first "(" from which the tail matches to the end (what `(.*?)` does, without a regex step per character).
    message, tail = r"(.*?)", k.LAYOUT.removeprefix(k.LAYOUT_HEAD).removeprefix(r"(.*?)")
    if k.LAYOUT_HEAD + message + tail != k.LAYOUT or not tail.startswith(r"\s*\("):
        raise ValueError("LAYOUT is no longer head + (.*?) + \\s*\\(...: update KafkaLineParser.java")
    regex = {"prefix": k.PREFIX, "layout_head": k.LAYOUT_HEAD, "layout_tail": tail, "continuation": k.CONTINUATION,
             "py_traceback": k.PY_TRACEBACK,
             "java_exception": k.JAVA_EXCEPTION, "timestamp": k.TIMESTAMP_START, "ident": k.IDENT,
             "ident_controller": k.fast_search(k.IDENT_CONTROLLER), "ident_epoch": k.fast_search(k.IDENT_EPOCH),
             "ident_broker": k.IDENT_BROKER, "ident_partition": k.IDENT_PARTITION, "old_prefix": k.OLD_STATE_PREFIX,
             "tp_split": k.TP_SPLIT, "int_list": k.INT_LIST}
    changed = [name for name, pattern in HAND_WRITTEN.items() if getattr(k, name) != pattern]
    if changed:
        raise ValueError(f"{', '.join(changed)} changed: update the fast path in KafkaLineParser.java and HAND_WRITTEN")
    return json.dumps({
        "ident_partition_starts": list(k.literal_prefixes(k.IDENT_PARTITION)),
        "old_prefix_starts": list(k.literal_prefixes(k.OLD_STATE_PREFIX)),
        "regex": {name: java_regex(rx) for name, rx in regex.items()},
        "regex_plain": {name: java_regex(rx, True) for name, rx in regex.items()}, "fast_path": fast_path,
        "templates": templates,
        "sep": k.SEP, "state_change_logger": k.STATE_CHANGE_LOGGER, "python_spaces": _spaces(),
        "ok": x.OK, "rejected": x.REJECTED, "source_format": "kafka_log",
        "reasons": {"no_timestamp": k.REASON_NO_TIMESTAMP, "no_layout": k.REASON_NO_LAYOUT,
                    "bad_timestamp": k.REASON_BAD_TIMESTAMP, "control_char": k.REASON_CONTROL_CHAR,
                    "not_utf8": x.REASON_NOT_UTF8, "bad_int": k.REASON_BAD_INT, "bad_list": k.REASON_BAD_LIST,
                    "ident_not_number": k.REASON_IDENT_NOT_NUMBER},
        "ident_loose": [{"pattern": java_regex(rx), "keys": list(k.IDENT_KEYS[name]),
                         "field": "broker_id" if name == "partition_broker_id" else name}
                        for name, rx in k.IDENT_LOOSE.items()],
        "field_int": java_regex(k.FIELD_INT), "field_list": java_regex(k.FIELD_LIST),
        "max_exception_chars": k.MAX_EXCEPTION_CHARS, "max_rejected_chars": tables.MAX_REJECTED_LINE_CHARS,
        "columns": [name for name, _ in x.STAGED],
        "fields": [*k.PARSED_FIELDS, "tp"],
        "int_fields": list(k.INT_FIELDS), "list_fields": list(k.LIST_FIELDS), "lower_fields": ["strategy", "trigger"],
    })


def split_at_dot_star(pattern: str) -> dict[str, object] | None:
    """``^HEAD.*TAIL`` (or ``.*?``) where HEAD is a few literals (no group, none a prefix of another) and TAIL
    starts with one literal: the parts the Java fast path matches without stepping ``.*`` one character at a
    time, else None.

    Why it is the same match: HEAD matches at most one way, ending at its literal's length; greedy ``.*`` then
    tries TAIL at every later position from the end backwards (lazy: forwards) and keeps the first that
    matches, and TAIL can only match where its literal starts, so trying those places in the same order (by
    ``lastIndexOf``/``indexOf``) finds the same one; TAIL's groups are the pattern's own groups, with the same
    numbers (HEAD has none, ``.*`` is in none). Plain lines hold no newline, so ``.`` takes every character.
    """
    if not pattern.startswith("^"):
        return None
    depth, after_any = 0, -1
    for token in k.regex_tokens(pattern, 1):
        if token.kind == k.ALTERNATION and depth == 0:
            return None
        if token.kind == k.QUANTIFIER and token.start == after_any and pattern[token.start] == "*":
            i = after_any - 1  # the "." of ".*"
            break
        after_any = token.end if token.kind == k.ANY and depth == 0 else -1
        depth += {k.OPEN: 1, k.CLOSE: -1}.get(token.kind, 0)
    else:
        return None
    head, tail = pattern[1:i], pattern[i + 2:]
    lazy = tail.startswith("?")
    tail = tail.removeprefix("?")
    if tail.startswith("+") or "(" in head.replace("(?:", "") or re.search(r"(?<!\[)\^", tail):
        return None
    heads, end, complete = k._prefixes_of(head, 0, ("",))
    heads = tuple(sorted(set(heads)))
    if not complete or end != len(head) or len(heads) > 16 or any(
            a != b and b.startswith(a) for a in heads for b in heads):
        return None
    literals = k.literal_prefixes(tail)
    if len(literals) != 1:
        return None
    return {"heads": list(heads), "lazy": lazy, "literal": literals[0], "tail": java_regex(tail, True)}


GROUP_SHAPES = {r"(-?\d+)": 1, r"(\d+)": 2, r"([\d, ]*\d|)": 3}
"""Groups the fast path matches by hand after a literal (``KafkaLineParser.literalGroup``), by shape number."""


def literals_then_group(pattern: str) -> dict[str, object] | None:
    """``(?:L1|L2|...)GROUP`` or ``L1GROUP`` (literals only, GROUP one of ``GROUP_SHAPES``): the literals in the
    pattern's order and the group's shape, for the Java fast path to try where the first literal occurs; else
    None."""
    group = next((g for g in GROUP_SHAPES if pattern.endswith(g) and not pattern.endswith("\\" + g)), None)
    if group is None:
        return None
    head, shape = pattern.removesuffix(group), GROUP_SHAPES[group]
    body = head
    if head.startswith("(?:"):  # a group of alternatives, which must span the whole head
        j = 3
        while (j := k._alternative_end(head, j)) < len(head) and head[j] == "|":
            j += 1
        if j != len(head) - 1:
            return None
        body = head[3:-1]
    i = 0
    while i < len(body):  # no group inside: GROUP must be group 1
        if body[i] == "(":
            return None
        i += 2 if body[i] == "\\" else 1
    alternatives, i = [], 0
    while True:
        end = k._alternative_end(body, i)
        heads, reached, complete = k._prefixes_of(body[i:end], 0, ("",))
        if not complete or reached != end - i or len(heads) != 1 or not heads[0]:
            return None
        alternatives.append(heads[0])
        if end == len(body):
            break
        if body[end] != "|":
            return None
        i = end + 1
    if body is head and len(alternatives) > 1:
        return None  # a top-level "|" without the group: the group belongs to the last alternative only
    return {"literals": alternatives, "shape": shape}


def anchored(pattern: str) -> bool:
    """Whether every match of ``pattern`` starts at 0 (a leading ``^``, no top-level ``|``): Java then runs
    ``lookingAt``, which is what ``find`` amounts to, without trying every later position."""
    return pattern.startswith("^") and k._alternative_end(pattern, 0) == len(pattern)


def _cache_dir() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "zkcontroller" / "jvm"


def _spark_jars() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent / "jars"


def _javac() -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "javac").is_file():
        return str(Path(home) / "bin" / "javac")
    return shutil.which("javac")


@functools.cache
def build_jar() -> tuple[Path | None, str]:
    """(jar, "") once the jar exists (built now or cached), else (None, why not). Safe to race: the jar
    appears by an atomic rename."""
    import pyspark

    sources = sorted(SOURCES.glob("*.java"))
    digest = hashlib.sha256(pyspark.__version__.encode())
    for source in sources:
        digest.update(source.name.encode() + b"\0" + source.read_bytes())
    jar = _cache_dir() / f"zkcontroller-jvm-{digest.hexdigest()[:16]}.jar"
    if jar.is_file():
        with contextlib.suppress(OSError):
            os.utime(jar)  # in use: see `prune_jars`
        return jar, ""
    javac = _javac()
    if javac is None:
        return None, "javac not found (install a JDK, e.g. openjdk-17-jdk-headless)"
    if not sources:
        return None, f"no Java sources in {SOURCES}"
    try:
        jar.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=jar.parent) as tmp:
            classes = Path(tmp) / "classes"
            done = subprocess.run([javac, "--release", JAVA_RELEASE, "-nowarn", "-encoding", "UTF-8", "-cp",
                                   str(_spark_jars() / "*"), "-d", str(classes), *map(str, sources)],
                                  capture_output=True, text=True, timeout=300)
            if done.returncode != 0:
                first = next((line for line in done.stderr.splitlines() if "error" in line), done.stderr.strip())
                return None, f"javac failed: {first[:300]}"
            partial = Path(tmp) / "out.jar"
            with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as z:
                z.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\nCreated-By: zkcontroller\n\n")
                for cls in sorted(classes.rglob("*.class")):
                    z.write(cls, cls.relative_to(classes).as_posix())
            os.replace(partial, jar)
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"could not build the JVM parser: {exc}"
    prune_jars(jar.parent, keep=jar)
    return jar, ""


UNUSED_JAR_DAYS = 7
"""A cached jar of other sources (an older checkout, another PySpark) is removed once no job has used it for
this long. Not at once: a job of another checkout may be starting with it, and its executors fetch it by path."""


def prune_jars(directory: Path, keep: Path, max_age_s: float = UNUSED_JAR_DAYS * 86400) -> list[Path]:
    """Remove the cache's jars unused for ``max_age_s`` (each use refreshes a jar's mtime); returns them."""
    now, removed = time.time(), []
    for old in directory.glob("zkcontroller-jvm-*.jar"):
        with contextlib.suppress(OSError):  # racing another job's prune, or a read-only cache: leave it
            if old != keep and now - old.stat().st_mtime > max_age_s:
                old.unlink()
                removed.append(old)
    return removed


def available(spark: Any) -> str | None:
    """None once the session can run the JVM parser, else why not (for a one-line warning).

    A session started without the jar in ``spark.jars`` (by other code, or a second SparkContext in the same
    JVM) gets it now: see ``_load``.
    """
    jar, why = build_jar()
    if jar is None:
        return None if _preloaded(spark) else why
    return _load(spark, jar)


def _preloaded(spark: Any) -> bool:
    """The parser is already on the driver's class path: ``spark-submit --jars`` with the jar, where the package
    comes from a wheel (``--py-files``) and its Java sources are not files to compile (docs/analytics.md)."""
    from py4j.protocol import Py4JError

    try:
        jvm = spark.sparkContext._jvm
        return _loads(jvm, jvm.java.lang.Thread.currentThread().getContextClassLoader())
    except Py4JError:
        return False


def _load(spark: Any, jar: Path) -> str | None:
    """Make ``jar`` usable in a running session: None when done, else why not.

    The driver: py4j resolves classes through the calling thread's context class loader, which Spark's launcher
    made a ``MutableURLClassLoader`` (``spark.jars`` at JVM start lands there); the jar is added to it, so
    every thread sees it. SQL ``ADD JAR`` would not do: it swaps in a new loader for the calling thread only.
    The executors: ``SparkContext.addJar``, once per context (a class found on the driver says nothing about
    a later context's executors, nor about executors in other JVMs).
    """
    from py4j.protocol import Py4JError

    jvm = spark.sparkContext._jvm
    sc = spark.sparkContext._jsc.sc()
    try:
        loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
        if not _loads(jvm, loader):
            loader.addURL(jvm.java.io.File(str(jar)).toURI().toURL())
        if f"/{jar.name}\n" not in sc.listJars().mkString("", "\n", "\n"):  # URLs such as spark://.../jars/X
            sc.addJar(str(jar))
        if _loads(jvm, loader):
            return None
    except Py4JError:  # e.g. a context class loader without addURL
        pass
    return (f"{jar.name} could not be loaded into this session (start the session with spark.jars={jar}, as "
            "zkcontroller's build_session does)")


def _loads(jvm: Any, loader: Any) -> bool:
    from py4j.protocol import Py4JError

    try:
        jvm.java.lang.Class.forName(ENTRY_CLASS, False, loader)
    except Py4JError:  # a missing class comes back as Py4JJavaError (ClassNotFoundException)
        return False
    return True


def parse(spark: Any, chunks: list[dict[str, object]], config: str | None = None) -> Any:
    """The staged rows (``extract.STAGED``) of uncompressed Kafka-format chunks, parsed on the JVM."""
    from pyspark.sql import DataFrame

    from zkcontroller.analytics.extract import STAGED, _ddl

    jvm = spark.sparkContext._jvm
    jdf = jvm.zkcontroller.jvm.KafkaChunks.parse(spark._jsparkSession, config or config_json(), json.dumps(chunks),
                                                  _ddl(STAGED))
    return DataFrame(jdf, spark)
