"""Benchmark (not a test): the JVM parse alone, its fast path against its regex-only path, CPU per line.

    uv run python bench/bench_jvm_parse.py                       # 1M lines, 3 rounds, local[2]
    uv run python bench/bench_jvm_parse.py --lines 100000 --rounds 5 --workdir /tmp/jp

Two measurements of ``KafkaLineParser`` over ``bench_analytics.generate``'s log, each alternating the two
configs (``jvm_parser.config_json(fast_path=...)``) round by round so both see the same machine:

1. **the loop alone**: ``bench/JvmParseBench.java`` (compiled here against the parser's jar) parses the log cut
   into the job's chunk size in one JVM thread and prints its thread CPU time, rows and a hash of every row;
   the two configs' hashes must agree;
2. **in Spark**: ``jvm_parser.parse(...).count()`` (read, parse, convert to Spark's internal rows; no cache)
   beside the floor ``spark.read.text(path).count()``, executor CPU from Spark's event log (task CPU time,
   hardly moved by other processes on the cores, unlike wall time).

Prints CPU microseconds per line for each; never fails on time.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_analytics import RUN_PROPERTY, generate, run_profiles
from zkcontroller.analytics import jvm_parser
from zkcontroller.analytics.extract import chunk_dicts, on_jvm
from zkcontroller.analytics.job import build_session
from zkcontroller.analytics.sources import chunk_size, plan_chunks, plan_sources, resolve_inputs

HARNESS = Path(__file__).with_name("JvmParseBench.java")
CONFIGS = {"regex-only": False, "fast": True}


def loop_alone(log: Path, rounds: int, chunk_bytes: int, work: Path) -> dict[str, list[float]]:
    """Thread CPU seconds per round of the parse loop, per config; checks the configs' rows agree."""
    jar, why = jvm_parser.build_jar()
    if jar is None:
        raise SystemExit(why)
    classes = work / "harness"
    classpath = f"{jar}:{jvm_parser._spark_jars()}/*"
    subprocess.run([jvm_parser._javac() or "javac", "-nowarn", "-d", str(classes), "-cp", classpath, str(HARNESS)],
                   check=True)
    paths = []
    for name, fast in CONFIGS.items():
        path = work / f"config-{name}.json"
        path.write_text(jvm_parser.config_json(fast))
        paths.append(str(path))
    done = subprocess.run(["java", "-XX:+UseG1GC", "-Xmx6g", "-cp", f"{classpath}:{classes}", "JvmParseBench",
                           str(rounds), str(chunk_bytes), str(log), *paths], check=True, capture_output=True, text=True)
    cpu: dict[str, list[float]] = {name: [] for name in CONFIGS}
    outputs: dict[str, set[tuple[str, str]]] = {name: set() for name in CONFIGS}
    for line in done.stdout.splitlines():
        _, _, _, config, _, seconds, _, rows, _, digest = line.split()
        name = list(CONFIGS)[int(config)]
        cpu[name].append(float(seconds))
        outputs[name].add((rows, digest))
    if len({frozenset(o) for o in outputs.values()}) != 1 or len(outputs["fast"]) != 1:
        raise SystemExit(f"the configs' rows differ: {outputs}")
    return cpu


def in_spark(log: Path, master: str, rounds: int, work: Path) -> dict[str, list[float]]:
    """Executor CPU seconds per round: the floor and the parse (counted, not cached) per config."""
    event_log = work / f"eventlog-{time.time_ns()}"
    event_log.mkdir(parents=True)
    spark = build_session(master, app_name="bench-jvm-parse", progress=False, parser="jvm", extra={
        "spark.eventLog.enabled": "true", "spark.eventLog.dir": str(event_log), "spark.eventLog.compress": "false"})
    try:
        chunks = chunk_dicts([c for c in plan_chunks(plan_sources(resolve_inputs([str(log)]), cluster="bench"),
                                                     spark.sparkContext.defaultParallelism) if on_jvm(c)])
        configs = {name: jvm_parser.config_json(fast) for name, fast in CONFIGS.items()}
        spark.read.text(str(log)).count()  # warm-up: JIT and class loading land on no timed run
        for config in configs.values():
            jvm_parser.parse(spark, chunks, config).count()
        for round_ in range(rounds):
            spark.sparkContext.setLocalProperty(RUN_PROPERTY, f"{round_}:floor")
            spark.read.text(str(log)).count()
            for name, config in configs.items():
                spark.sparkContext.setLocalProperty(RUN_PROPERTY, f"{round_}:{name}")
                started = time.perf_counter()
                rows = jvm_parser.parse(spark, chunks, config).count()
                print(f"  round {round_} {name}: {rows:,} rows, {time.perf_counter() - started:.1f} s wall", flush=True)
        spark.sparkContext.setLocalProperty(RUN_PROPERTY, None)
    finally:
        spark.stop()  # the event log is complete once the session has stopped
    profiles = run_profiles(event_log)
    return {name: [profiles[f"{r}:{name}"].cpu_s for r in range(rounds)] for name in ("floor", *CONFIGS)}


def _row(name: str, seconds: list[float], lines: int) -> str:
    per_line = [s / lines * 1e6 for s in seconds]
    return (f"| {name} | {' / '.join(f'{s:.2f}' for s in seconds)} s | {statistics.median(per_line):.2f} µs "
            f"({min(per_line):.2f}-{max(per_line):.2f}) |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--chunk-bytes", type=int, default=None, help="The loop alone: chunk size (default: what "
                        "the job's planner cuts for two cores).")
    parser.add_argument("--skip-spark", action="store_true", help="Only the loop alone.")
    parser.add_argument("--workdir", type=Path, default=None, help="Keep the log (reused when there) and outputs here.")
    args = parser.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="bench-jvm-parse-"))
    work.mkdir(parents=True, exist_ok=True)
    log, count = work / f"log-{args.lines}.log", work / f"log-{args.lines}.lines"
    if not (log.exists() and count.exists()):
        count.write_text(str(generate(log, args.lines)))
    lines = int(count.read_text())
    print(f"{lines:,} lines ({log.stat().st_size / 2**20:.0f} MiB), {args.rounds} rounds, configs alternating",
          flush=True)
    print("\nThe parse loop alone (one JVM thread, thread CPU):\n\n"
          "| config | CPU per round | CPU per line |\n|---|---:|---:|")
    chunk_bytes = args.chunk_bytes or chunk_size(log.stat().st_size, 2)
    for name, seconds in loop_alone(log, args.rounds, chunk_bytes, work).items():
        print(_row(name, seconds, lines), flush=True)
    if not args.skip_spark:
        spark = in_spark(log, args.master, args.rounds, work)
        print(f"\nIn Spark, {args.master} (executor CPU; the parse counted, not cached):\n\n"
              "| run | CPU per round | CPU per line |\n|---|---:|---:|")
        for name, seconds in spark.items():
            print(_row(name if name != "floor" else "read.text().count()", seconds, lines))
        floor = statistics.median(spark["floor"])
        print("\nparse / floor (medians): " + ", ".join(
            f"{name} {statistics.median(spark[name]) / floor:.1f}x" for name in CONFIGS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
