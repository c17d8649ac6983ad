"""The Kafka-format parse alone, both parsers, on the shared sample logs and on bench_analytics' generated log.

    uv run python bench/bench_parse.py [--lines 200000] [--repeat 3] [--jvm]

Python: ``KafkaLogParser.parse_lines`` in this process (process CPU time), floor: reading the same lines.
JVM (``--jvm``, wall time): ``jvm_parser.parse`` on a ``local[1]`` session, counted, floor:
``spark.read.text(...).count()`` of the same files. Best of ``--repeat`` runs each. Run it with another
checkout's ``src`` first on ``PYTHONPATH`` to time that checkout's parsers on the same input
(docs/benchmarks.md, "Loose twins"). Never fails on time.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.bench_analytics import generate

from zkcontroller.analytics.kafka_log_parser import KafkaLogParser, ParsedLine

SAMPLES = Path(__file__).resolve().parents[1] / ".." / "shared" / "kafka-logs" / "samples"


def best(repeat: int, run: Callable[[], object], clock: Callable[[], float] = time.perf_counter,
         ) -> tuple[float, object]:
    """The least time (``clock``: wall by default) of ``repeat`` runs, and the last run's result."""
    times, result = [], None
    for _ in range(repeat):
        started = clock()
        result = run()
        times.append(clock() - started)
    return min(times), result


def python_parse(files: list[Path]) -> tuple[int, int]:
    parser, records, rejected = KafkaLogParser(), 0, 0
    for path in files:
        with path.open(encoding="utf-8", errors="replace") as lines:
            for result in parser.parse_lines(lines):
                if isinstance(result, ParsedLine):
                    records += 1
                else:
                    rejected += 1
    return records, rejected


def read_lines(files: list[Path]) -> int:
    count = 0
    for path in files:
        with path.open(encoding="utf-8", errors="replace") as lines:
            for _ in lines:
                count += 1
    return count


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lines", type=int, default=200_000, help="Lines of the generated log.")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--jvm", action="store_true", help="Also time the JVM parser (starts a local[1] session).")
    ap.add_argument("--samples", type=Path, default=SAMPLES)
    args = ap.parse_args()
    import zkcontroller.analytics.kafka_log_parser as k

    print(f"parser module: {k.__file__}")
    with tempfile.TemporaryDirectory() as tmp:
        generated = Path(tmp) / "controller.log"
        generate(generated, args.lines)
        inputs = {"samples": sorted(p for p in args.samples.rglob("*") if p.is_file() and p.suffix == ".log"),
                  "generated": [generated]}
        print("| input | lines | Python parse CPU s | floor (read) CPU s | records | rejected |")
        print("|---|---:|---:|---:|---:|---:|")
        for name, files in inputs.items():  # process CPU time: steadier than wall time on a shared host
            floor, lines = best(args.repeat, lambda f=files: read_lines(f), time.process_time)  # type: ignore[misc]
            took, counts = best(args.repeat, lambda f=files: python_parse(f), time.process_time)  # type: ignore[misc]
            records, rejected = counts  # type: ignore[misc]
            print(f"| {name} | {lines:,} | {took:.3f} | {floor:.3f} | {records:,} | {rejected:,} |")
        if args.jvm:
            jvm_runs(inputs, args.repeat)
    return 0


def jvm_runs(inputs: dict[str, list[Path]], repeat: int) -> None:
    from pyspark.sql import SparkSession

    from zkcontroller.analytics import jvm_parser
    from zkcontroller.analytics.extract import chunk_dicts, on_jvm
    from zkcontroller.analytics.sources import plan_chunks, plan_sources, resolve_inputs

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    jar, why = jvm_parser.build_jar()
    if jar is None:
        print(f"JVM parser unavailable: {why}")
        return
    spark = (SparkSession.builder.master("local[1]").config("spark.jars", str(jar))
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    try:
        print(f"\njar: {jar.name}")
        print("| input | JVM parse s | floor (read.text().count()) s | rows |")
        print("|---|---:|---:|---:|")
        for name, files in inputs.items():
            paths = [str(p) for p in files]
            chunks = chunk_dicts([c for c in plan_chunks(plan_sources(resolve_inputs(paths)), 1) if on_jvm(c)])
            def parse(chunks: list[dict[str, object]] = chunks) -> int:
                return int(jvm_parser.parse(spark, chunks).count())

            def read(paths: list[str] = paths) -> int:
                return int(spark.read.text(paths).count())

            best(1, parse)  # warm-up: JIT, class loading
            took, rows = best(repeat, parse)
            floor, _ = best(repeat, read)
            print(f"| {name} | {took:.3f} | {floor:.3f} | {rows:,} |")
    finally:
        spark.stop()


if __name__ == "__main__":
    raise SystemExit(main())
