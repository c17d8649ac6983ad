"""The JVM parser against the Python reference: identical staged rows (every column, sorted) on every shared
Kafka log, the benchmark generator's output, the bad-input log set and a file of edge cases, cut into the
default chunks and into 4 KiB ones. A wrong line number must make the comparison fail."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest
from tests.analytics import logsets
from tests.analytics.conftest import SHARED_LOGS
from tests.helpers import tool_missing

from zkcontroller.analytics import jvm_parser
from zkcontroller.analytics.extract import chunk_dicts, extract, on_jvm
from zkcontroller.analytics.sources import plan_chunks, plan_sources, resolve_inputs

pytestmark = pytest.mark.spark

KC, SC = "(kafka.controller.KafkaController)", "(state.change.logger)"
EMOJI = "\U0001f525"  # outside the BMP: two UTF-16 units in Java, one character in Python


def _edge_cases() -> bytes:
    """Lines where Python's and Java's defaults differ: Unicode classes, line ends, bytes, lengths, dates."""
    ok = "[2024-02-29 23:59:59,999] INFO [Controller id=1 epoch=2] "
    lines = [
        f"{ok}Resigned {KC}".encode(),
        f"{ok}Resigned {KC}\r".encode(),  # \r\n ending
        f"[2024-01-01 00:00:00,000]\u3000INFO\u3000[Controller id=1] Resigned {KC}".encode(),  # \s is Unicode
        f"[2024-01-01 00:00:00,000] INFO [Controller id=\u0663] Resigned {KC}".encode(),  # \d matches ٣
        f"[\uff12024-01-01 00:00:00,000] INFO Resigned {KC}".encode(),  # a digit fromisoformat refuses
        f"[2024-01-01 00:00:00,\u0663\u0663\u0663] INFO Resigned {KC}".encode(),  # ... but int() takes
        f"[2024-13-01 00:00:00,000] INFO Resigned {KC}".encode(),
        f"[2023-02-29 00:00:00,000] INFO Resigned {KC}".encode(),
        f"[2024-01-01 24:00:00,000] INFO Resigned {KC}".encode(),
        f"[0000-01-01 00:00:00,000] INFO Resigned {KC}".encode(),
        f"2024-01-01T00:00:00+0530 INFO Resigned {KC}".encode(),
        f"2024-01-01T00:00:00-23:59 INFO Resigned {KC} [main]".encode(),
        f"2024-01-01T00:00:00+22:99 INFO Resigned {KC}".encode(),
        f"2024-01-01T00:00:00+24:00 INFO Resigned {KC}".encode(),
        f"2024-01-01 00:00:00.123456Z WARN Resigned {KC}".encode(),
        f"2024-01-01T00:00:00.5Z stdout F [2024-01-01 00:00:01,000] INFO Resigned {KC}".encode(),
        f"kafka-1    | [2024-01-01 00:00:01,000] INFO [Controller id=2] Resigned {KC}".encode(),
        f"{ok}Shutting down broker 99999999999 {KC}".encode(),  # int: out of range becomes null
        f"{ok}Newly added brokers: , deleted brokers: 99999999999, all live brokers: 1,2147483648 {KC}".encode(),
        f"{ok}Shutting down broker 007 {KC}".encode(),
        # fields that do not fit their template: rejected lines naming the field (a group, an optional group,
        # an extra, a list; a loose twin's value that fits leaves the line to the strict templates)
        f"{ok}Epoch incremented to 99999999999999999999 {KC}".encode(),
        f"{ok}1 successfully elected as the controller. Epoch incremented to x1 and epoch zk version is now 1 {KC}"
        .encode(),
        f"{ok}Changed partition t-0 from NewPartition to OnlinePartition with state LeaderAndIsr(leader=abc, "
        f"leaderEpoch=0, isr=List(1), zkVersion=0) {SC}".encode(),
        f"{ok}Newly added brokers: 1,x, deleted brokers: , all live brokers: 1,2 {KC}".encode(),
        f"{ok}Newly added brokers: 1,2, deleted brokers: , all live brokers: 1,2 and more {KC}".encode(),
        f"{ok}Elected leader \u0664\u0664 for Offline partition t-1 {KC}".encode(),
        f"{ok}Elected leader 1 for Offline partition t\x01-0 {KC}".encode(),  # control character
        f"{ok}Topic {'é' * 990}{EMOJI * 20} {KC}".encode(),
        f"no timestamp {EMOJI * 1200}".encode(),
        f"{ok}Error {KC}".encode(),
        f"java.lang.IllegalStateException: {EMOJI * 400}".encode(),
        b"\tat kafka.Foo.bar(Foo.scala:1)",
        f"{ok}Changed partition t-1 from NewPartition to OnlinePartition with state LeaderAndIsr(leader=\u0664, "
        f"leaderEpoch=0, isr=List(\u0664, 2), zkVersion=0) {SC}".encode(),
        f"{ok}Starting replica leader election (PREFERRED) for partitions t-0 triggered by AdminClientTriggered "
        f"{KC}".encode(),
        b"\x1c\x1d\xe3\x80\x80 ",  # blank by str.isspace()
        "\u2028".encode(),
        f"{ok}Resigned\u2028tail {KC}".encode(),
        f"{ok}Resigned {KC}\x0bjunk".encode(),
        f"{ok}Resigned {KC}".encode() + b"\rbare carriage return ends a line",
        b"caf\xe9 latin-1",
        b"\xed\xa0\x80 surrogate, \xc0\xaf overlong, \xf4\x90\x80\x80 too high, \xe2\x82 cut, \xf0\x9f\x94 cut",
        f"{ok}Error processing event {KC}".encode(),
        b"Traceback (most recent call last):",
        b'  File "x.py", line 1, in f',
        b"\xff\xfe",  # not UTF-8: a blank line to the parser, ends the traceback
        b"ValueError: after the blank",
        f"{ok}Error processing event {KC}".encode(),
        b"Traceback (most recent call last):",
        f"ValueError: {EMOJI * 350}".encode(),
        f"{ok}Error moving replicas {KC}".encode(),  # an exception group's traceback (asyncio.TaskGroup)
        b"  + Exception Group Traceback (most recent call last):",
        b'  |   File "tasks.py", line 15, in run_workers',
        b"  | ExceptionGroup: unhandled errors in a TaskGroup (1 sub-exception)",
        b"  +-+---------------- 1 ----------------",
        b"    | Traceback (most recent call last):",
        b"    | KeyError: 'broker 7'",
        b"    +------------------------------------",
        b"",
        b"The above exception was the direct cause of the following exception:",
        b"",
        b"Traceback (most recent call last):",
        b"zkcontroller.zk.errors.ControllerMovedError: Controller epoch zkVersion check fails",
        f"{ok}Resigned {KC}".encode(),
        "\ufeff[2024-01-01 00:00:00,000] INFO BOM Resigned".encode() + f" {KC}".encode(),
        f"{ok}Newly added brokers: , deleted brokers: 2, all live brokers: 1,3 {KC}".encode(),
        "[2024-01-01 00:00:00] INFO [Partition t-\u0663 broker=\u0661] Shrinking ISR from 1,2 to 1 "
        "(kafka.cluster.Partition)".encode(),
    ]
    return b"\n".join(lines) + b"\n\n" + f"{ok}Resigned {KC}".encode()  # no final newline


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    from bench.bench_analytics import generate
    from tests.analytics.test_kafka_log_parser import CASES, IDENT_WARNING_CASES, UNFIT_CASES, VARIANT_LINES

    if not SHARED_LOGS.is_dir():
        pytest.skip(f"shared Kafka logs not found at {SHARED_LOGS}")
    root = tmp_path_factory.mktemp("jvm-diff")
    (root / "bench").mkdir()
    generate(root / "bench" / "controller.log", 5_000)
    logsets.write_broken(root / "broken")
    logsets.write_scenario(root / "prod")
    (root / "edge").mkdir()
    (root / "edge" / "edge-cases.log").write_bytes(_edge_cases())
    (root / "edge" / "variants.log").write_text(
        "\n".join([*(line for line, _, _ in CASES), *VARIANT_LINES, *(line for line, _ in UNFIT_CASES),
                   *(line for line, _, _ in IDENT_WARNING_CASES)]) + "\n",
        encoding="utf-8")
    return [str(SHARED_LOGS.resolve()), str(root / "bench"), str(root / "broken"), str(root / "prod"),
            str(root / "edge")]


def _rows(df) -> list[tuple]:
    return sorted(tuple((k, repr(v)) for k, v in sorted(r.asDict().items())) for r in df.collect())


def _mismatch(python: list[tuple], jvm: list[tuple]) -> str:
    only_py, only_jvm = sorted(set(python) - set(jvm)), sorted(set(jvm) - set(python))
    return f"{len(only_py)} rows only from Python, e.g. {only_py[:2]}; {len(only_jvm)} only from the JVM, " \
           f"e.g. {only_jvm[:2]}"


@pytest.mark.parametrize("chunk_bytes", [None, 4096])
def test_jvm_and_python_parsers_give_identical_rows(spark, inputs: list[str], chunk_bytes: int | None) -> None:
    """Default chunks on everything; 4 KiB chunks (cut records, traces at a chunk's start) on the small sets."""
    assert jvm_parser.available(spark) is None, jvm_parser.available(spark)
    files = resolve_inputs(inputs if chunk_bytes is None else inputs[2:])
    both = {}
    for parser in ("python", "jvm"):
        extracted = extract(spark, files, chunk_bytes=chunk_bytes, parser=parser)
        assert extracted.parser == parser and not extracted.warnings
        try:
            both[parser] = _rows(extracted.parsed)
        finally:
            extracted.release()
    assert len(files.kafka) > (40 if chunk_bytes is None else 4) and len(both["python"]) > 50
    assert both["jvm"] == both["python"], _mismatch(both["python"], both["jvm"])


def test_the_comparison_catches_a_wrong_line_number_and_a_wrong_template(spark, inputs: list[str]) -> None:
    files = resolve_inputs([inputs[-1]])  # the edge cases
    chunks = [c for c in plan_chunks(plan_sources(files), 1) if on_jvm(c)]
    right = _rows(jvm_parser.parse(spark, chunk_dicts(chunks)))
    shifted = [{**c, "first_line": int(c["first_line"]) + 1} for c in chunk_dicts(chunks)]
    wrong = _rows(jvm_parser.parse(spark, shifted))
    assert wrong != right and len(wrong) == len(right)
    config = re.sub(r'"kind": "controller_resigned"', '"kind": "controller_quit"', jvm_parser.config_json())
    assert _rows(jvm_parser.parse(spark, chunk_dicts(chunks), config)) != right


def test_python_regexes_are_translated_to_the_same_meaning_in_java(spark) -> None:
    """Each class on every BMP character, Python's re against java.util.regex: only characters newer than
    Java's Unicode tables may differ (\\w, and a \\b next to one)."""
    bmp = "".join(chr(c) for c in range(0x10000) if not 0xD800 <= c <= 0xDFFF)
    jvm = spark.sparkContext._jvm

    def java(pattern: str, text: str) -> str:
        return jvm.java.util.regex.Pattern.compile(jvm_parser.java_regex(pattern), 1).matcher(text).replaceAll("#")

    for pattern in (r"\s", r"\S", r"\d", r"\D", r"\w", r"\W", r"[^\],\s]", r"[\w.$-]", r"[\d, ]"):
        python_out, java_out = re.sub(pattern, "#", bmp), java(pattern, bmp)
        assert len(python_out) == len(java_out) == len(bmp)
        differ = [c for c, p, j in zip(bmp, python_out, java_out, strict=True) if p != j]
        # Only characters Java 17's Unicode tables do not know yet (type 0: unassigned), for \w.
        assert all("w" in pattern.lower() and jvm.java.lang.Character.getType(ord(c)) == 0 for c in differ), \
            (pattern, differ[:5])
    text = "a\u3000at a\u0663 a\x1cat a\xe9 a_ a. \u2028at a\u00b2a a\u2160 Foo.BarException\u0300x \tat "
    for pattern in (r"a\b", r"\b\w+\b", r"\s+at ", r"^\s*\(", r"(?:Exception|Error)\b", r".$", r"\w+$"):
        assert java(pattern, text) == re.sub(pattern, "#", text), pattern
    assert "\x1c" in jvm_parser._spaces() and "\u3000" in jvm_parser._spaces()  # str.isspace(), not ASCII
    with pytest.raises(ValueError):
        jvm_parser.java_regex(r"[a[b]")  # a nested class in Java
    with pytest.raises(ValueError):
        jvm_parser.java_regex(r"\Z")


def test_without_javac_the_job_falls_back_to_python_with_one_warning(spark, monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setattr(jvm_parser, "available", lambda _: "javac not found")
    log = tmp_path / "controller.log"
    log.write_text(f"[2024-01-01 00:00:00,000] INFO [Controller id=1] Resigned {KC}\n")
    extracted = extract(spark, resolve_inputs([str(log)]))
    try:
        assert extracted.parser == "python"
        assert extracted.warnings == ["JVM parser unavailable, parsing with Python (much slower): javac not found"]
        assert extracted.events.count() == 1
    finally:
        extracted.release()


def late_session_check(master: str, inputs: list[str]) -> None:
    """Child process of the test below: a session started as other code starts one (no ``spark.jars``), then the
    job's extract with each parser. Prints one JSON line."""
    import json

    from py4j.protocol import Py4JError
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.master(master).appName("not-zkcontroller").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    try:
        jvm = spark.sparkContext._jvm
        try:
            jvm.java.lang.Class.forName(jvm_parser.ENTRY_CLASS, False,
                                        jvm.java.lang.Thread.currentThread().getContextClassLoader())
            missing_before = False
        except Py4JError:
            missing_before = True
        files, rows, used = resolve_inputs(inputs), {}, {}
        for parser in ("jvm", "python"):
            extracted = extract(spark, files, parser=parser)
            try:
                used[parser], rows[parser] = (extracted.parser, extracted.warnings), _rows(extracted.parsed)
            finally:
                extracted.release()
        print(json.dumps({"missing_before": missing_before, "used": used, "rows": len(rows["python"]),
                          "mismatch": "" if rows["jvm"] == rows["python"] else _mismatch(rows["python"], rows["jvm"])}))
    finally:
        spark.stop()


@pytest.mark.timeout(600)
def test_a_session_started_without_the_jar_gets_it_on_the_driver_and_the_executors(inputs: list[str]) -> None:
    """In a fresh process (this suite's session has the jar from the start): ``local-cluster`` runs the tasks in
    an executor JVM of their own, so the jar must be shipped, not just loaded on the driver."""
    import json
    import os
    import subprocess
    import sys

    import pyspark

    jar, why = jvm_parser.build_jar()
    if jar is None:
        tool_missing("javac", f"{why} (the Python fallback is tested above)")
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "SPARK_HOME": os.path.dirname(pyspark.__file__),
           "SPARK_LOCAL_IP": "127.0.0.1"}
    code = ("import sys; from tests.analytics.test_jvm_parser import late_session_check; "
            "late_session_check(sys.argv[1], sys.argv[2:])")
    done = subprocess.run([sys.executable, "-c", code, "local-cluster[1,1,1024]", *inputs[1:]], env=env,
                          cwd=Path(__file__).resolve().parents[2], capture_output=True, text=True, timeout=540)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["missing_before"], "the child's session had the jar from the start: this tests nothing"
    assert result["used"] == {"jvm": ["jvm", []], "python": ["python", []]}, result["used"]
    assert result["rows"] > 5000 and result["mismatch"] == "", result["mismatch"]


def test_cached_jars_of_other_sources_are_pruned_once_unused_for_a_week(tmp_path: Path) -> None:
    now = time.time()
    current, recent, stale = (tmp_path / f"zkcontroller-jvm-{n}.jar" for n in ("cur", "new", "old"))
    for jar, age_days in ((current, 30), (recent, 6), (stale, 8)):
        jar.write_bytes(b"jar")
        os.utime(jar, (now - age_days * 86400, now - age_days * 86400))
    unrelated = tmp_path / "notes.txt"
    unrelated.write_text("kept")
    os.utime(unrelated, (now - 30 * 86400, now - 30 * 86400))
    assert jvm_parser.prune_jars(tmp_path, keep=current) == [stale]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([current.name, recent.name, unrelated.name])


def test_using_the_cached_jar_keeps_it_from_being_pruned() -> None:
    jar, why = jvm_parser.build_jar()
    if jar is None:
        tool_missing("javac", why)
    week_ago = time.time() - 8 * 86400
    os.utime(jar, (week_ago, week_ago))
    jvm_parser.build_jar.cache_clear()  # once per process: as the next job's process would find it
    assert jvm_parser.build_jar()[0] == jar
    assert time.time() - jar.stat().st_mtime < 3600


def test_under_spark_submit_a_jar_given_with_jars_is_used_without_sources(spark, monkeypatch) -> None:
    """Imported from a wheel (``--py-files``) the package has no Java sources to compile, but ``--jars`` put the
    parser on the driver's class path: the job uses it instead of warning and parsing with Python. Here the
    running session already has the class loaded (the spark fixture's session was started with the jar)."""
    monkeypatch.setattr(jvm_parser, "build_jar", lambda: (None, "no Java sources in x.whl/zkcontroller/analytics/jvm"))
    assert jvm_parser.available(spark) is None


def test_without_sources_or_a_loaded_jar_the_reason_is_given(monkeypatch) -> None:
    class NoJvm:
        def __getattr__(self, name: str) -> object:
            from py4j.protocol import Py4JError

            raise Py4JError("no JVM")

    fake = type("S", (), {"sparkContext": type("C", (), {"_jvm": NoJvm()})()})()
    monkeypatch.setattr(jvm_parser, "build_jar", lambda: (None, "no Java sources in x"))
    assert jvm_parser.available(fake) == "no Java sources in x"
