"""Benchmark (not a test): the analytics job on a large synthetic Kafka log vs a pure-Python parse.

    uv run python bench/bench_analytics.py                          # 10k, 100k, 1M lines
    uv run python bench/bench_analytics.py --sizes 10000,10000000   # the 10M row of the growth table

Generates one merged controller.log + state-change.log stream the way a Kafka 2.x (1.1-2.5, TRACE
state-change logger) cluster writes it: topic creations, leadership moves, broker failures with offline
partitions and re-elections, controller failovers, stack traces and a sprinkle of garbage lines. Then it
times, per size: (1) the single-process pure-Python reference parser over the file, (2) Spark's bare
``spark.read.text().count()`` (the floor) and (3) the whole Spark job (extract, every table, Parquet,
report) with each parser (``--parsers``: the JVM parser, the Python parser in Python workers) on local[1]
and local[2], all of one master in the same session, after one untimed job per parser on the smallest log
(so neither pays the session's warm-up). Prints lines per second and the ratios, and each run's executor CPU
seconds and how long 0, 1, 2... tasks ran at once, from Spark's event log (kept in the workdir; read again with
``--event-log``); never fails on time.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from zkcontroller.analytics import job
from zkcontroller.analytics.job import JobConfig, build_session, run
from zkcontroller.analytics.kafka_log_parser import KafkaLogParser, ParsedLine

STATE = "(state.change.logger)"
CTRL = "(kafka.controller.KafkaController)"


class LogWriter:
    """Writes lines with a monotonic millisecond clock, formatted like log4j's default layout."""

    def __init__(self, out, rng: random.Random, start_ms: int) -> None:
        self.out, self.rng, self.ms, self.lines = out, rng, start_ms, 0

    def emit(self, level: str, text: str, logger: str, step_ms: int = 2) -> None:
        self.ms += self.rng.randint(0, step_ms)
        t = time.gmtime(self.ms // 1000)
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", t) + f",{self.ms % 1000:03d}"
        self.out.write(f"[{stamp}] {level} {text} {logger}\n")
        self.lines += 1

    def raw(self, text: str) -> None:
        self.out.write(text + "\n")
        self.lines += 1


def generate(path: Path, target_lines: int, seed: int = 7) -> int:
    """Write about ``target_lines`` lines to ``path``; returns the exact count."""
    rng = random.Random(seed)
    brokers = [1, 2, 3, 4, 5]
    topics = [f"orders-{i:03d}" for i in range(120)]
    leaders = {(t, p): rng.choice(brokers) for t in topics for p in range(12)}
    controller, epoch = 1, 10
    with path.open("w", encoding="utf-8") as out:
        w = LogWriter(out, rng, 1_700_000_000_000)
        w.emit("INFO", f"[Controller id={controller}] {controller} successfully elected as the controller. "
               f"Epoch incremented to {epoch} and epoch zk version is now {epoch}", CTRL)
        w.emit("INFO", f"[Controller id={controller}] Ready to serve as the new controller with epoch {epoch}", CTRL)
        while w.lines < target_lines:
            roll = rng.random()
            tp = rng.choice(list(leaders))
            topic, part = tp
            ce = f"[Controller id={controller} epoch={epoch}]"
            if roll < 0.30:  # leadership move (preferred / reassignment): state change + requests + broker side
                new = rng.choice(brokers)
                leaders[tp] = new
                isr = ",".join(str(b) for b in sorted(rng.sample(brokers, 3)))
                w.emit("TRACE", f"{ce} Changed partition {topic}-{part} from OnlinePartition to OnlinePartition "
                       f"with state LeaderAndIsr(leader={new}, leaderEpoch={rng.randint(1, 99)}, isr=List({isr}), "
                       f"zkVersion={rng.randint(1, 99)})", STATE)
                for b in isr.split(","):
                    state = (f"PartitionState(controllerEpoch={epoch}, leader={new}, leaderEpoch=5, isr={isr}, "
                             f"zkVersion=5, replicas={isr}, isNew=false)")
                    w.emit("TRACE", f"{ce} Sending become-follower LeaderAndIsr request {state} "
                           f"to broker {b} for partition {topic}-{part}", STATE)
                    w.emit("TRACE", f"[Broker id={b}] Received LeaderAndIsr request {state} "
                           f"correlation id {w.lines} from controller {controller} epoch {epoch} for partition "
                           f"{topic}-{part}", STATE)
            elif roll < 0.55:
                b = rng.choice(brokers)
                w.emit("TRACE", f"[Broker id={b}] Cached leader info PartitionState(controllerEpoch={epoch}, leader="
                       f"{leaders[tp]}, leaderEpoch=5, isr=1,2,3, zkVersion=5, replicas=1,2,3, offlineReplicas=) for "
                       f"partition {topic}-{part} in response to UpdateMetadata request sent by controller "
                       f"{controller} epoch {epoch} with correlation id {w.lines}", STATE)
            elif roll < 0.75:
                b = rng.choice(brokers)
                w.emit("TRACE", f"{ce} Changed state of replica {b} for partition {topic}-{part} from OnlineReplica "
                       "to OnlineReplica", STATE)
                w.emit("TRACE", f"[Broker id={b}] Handling LeaderAndIsr request correlationId {w.lines} from "
                       f"controller {controller} epoch {epoch} starting the become-follower transition for "
                       f"partition {topic}-{part} with leader {leaders[tp]}", STATE)
            elif roll < 0.97:
                w.emit("TRACE", f"[Controller id={controller}] Checking need to trigger auto leader balancing", CTRL)
                w.emit("DEBUG", f"[Controller id={controller}] Topics not in preferred replica for broker "
                       f"{rng.choice(brokers)} Map()", CTRL)
                w.emit("TRACE", f"[Controller id={controller}] Leader imbalance ratio for broker "
                       f"{rng.choice(brokers)} is 0.0", CTRL)
            elif roll < 0.995:
                dead = rng.choice([b for b in brokers if b != controller])
                _broker_failure(w, ce, controller, epoch, dead, leaders, brokers)
            elif roll < 0.998:
                w.emit("ERROR", f"{ce} Controller {controller} epoch {epoch} failed to change state for partition "
                       f"{topic}-{part} from OfflinePartition to OnlinePartition", STATE)
                w.raw("kafka.common.StateChangeFailedException: Failed to elect leader for partition "
                      f"{topic}-{part} under strategy OfflinePartitionLeaderElectionStrategy")
                for frame in range(4):
                    w.raw(f"\tat kafka.controller.ZkPartitionStateMachine.doElect(PartitionStateMachine.scala:{frame})")
            elif roll < 0.9995:
                w.raw(f"garbage {rng.random()} truncated line [2023-")
            else:
                w.emit("INFO", f"[Controller id={controller}] Resigned", CTRL, step_ms=500)
                controller, epoch = rng.choice(brokers), epoch + 1
                w.emit("INFO", f"[Controller id={controller}] {controller} successfully elected as the controller. "
                       f"Epoch incremented to {epoch} and epoch zk version is now {epoch}", CTRL, step_ms=3000)
                w.emit("INFO", f"[Controller id={controller}] Ready to serve as the new controller with epoch "
                       f"{epoch}", CTRL, step_ms=400)
        return w.lines


def _broker_failure(w: LogWriter, ce: str, controller: int, epoch: int, dead: int,
                    leaders: dict[tuple[str, int], int], brokers: list[int]) -> None:
    live = ",".join(str(b) for b in brokers if b != dead)
    w.emit("INFO", f"[Controller id={controller}] Newly added brokers: , deleted brokers: {dead}, bounced brokers: , "
           f"all live brokers: {live}", CTRL, step_ms=200)
    w.emit("INFO", f"[Controller id={controller}] Broker failure callback for {dead}", CTRL)
    led = [tp for tp, b in leaders.items() if b == dead][:40]
    for topic, part in led:
        w.emit("TRACE", f"{ce} Changed partition {topic}-{part} state from OnlinePartition to OfflinePartition", STATE)
    for topic, part in led:
        new = w.rng.choice([b for b in brokers if b != dead])
        leaders[(topic, part)] = new
        w.emit("TRACE", f"{ce} Changed partition {topic}-{part} from OfflinePartition to OnlinePartition with state "
               f"LeaderAndIsr(leader={new}, leaderEpoch=7, isr=List({new}), zkVersion=7)", STATE, step_ms=5)
        w.emit("TRACE", f"{ce} Changed state of replica {dead} for partition {topic}-{part} from OnlineReplica to "
               "OfflineReplica", STATE)


def python_baseline(path: Path) -> tuple[float, int, int]:
    parser = KafkaLogParser()
    started = time.perf_counter()
    records = rejected = 0
    with path.open(encoding="utf-8", errors="replace") as lines:
        for result in parser.parse_lines(lines):
            if isinstance(result, ParsedLine):
                records += 1
            else:
                rejected += 1
    return time.perf_counter() - started, records, rejected


class StepTimer:
    """``--per-table``: seconds from the previous step to the end of each table written (``write_table``) or
    each collect to the driver, so driver-side work lands on the step it precedes. The job runs independent
    tables and collects from a few threads (``job._in_parallel``): within such a group, steps are listed in
    the order they end and each holds only the time since the previous one ended."""

    def __init__(self) -> None:
        self.steps: list[tuple[str, float]] = []
        self.last = time.perf_counter()
        self.write_table, self.collect = job.write_table, job._collect

    def _step(self, name: str) -> None:
        now = time.perf_counter()
        self.steps.append((name, now - self.last))
        self.last = now

    def __enter__(self) -> StepTimer:
        def write_table(name, df, out):
            path = self.write_table(name, df, out)
            self._step(name)
            return path

        def collect(df):
            rows = self.collect(df)
            self._step("collect")
            return rows

        job.write_table, job._collect = write_table, collect
        self.last = time.perf_counter()
        return self

    def __exit__(self, *_: object) -> None:
        job.write_table, job._collect = self.write_table, self.collect
        self._step("rest")

    def line(self) -> str:
        return ", ".join(f"{name} {seconds:.2f}" for name, seconds in self.steps)


RUN_PROPERTY = "zkcontroller.bench.run"
"""A Spark local property naming the timed run each job belongs to (threads started with PySpark's
``inheritable_thread_target``, as the job's are, carry it over): `run_profiles` sums task CPU by it."""


@dataclass
class RunProfile:
    """What Spark's event log says of one timed run: task CPU, and how long 0, 1, 2... tasks ran at once."""

    cpu_s: float = 0.0
    jobs: list[tuple[int, int]] = field(default_factory=list)  # (submitted, completed) ms
    tasks: list[tuple[int, int]] = field(default_factory=list)  # (launched, finished) ms

    def concurrency(self) -> dict[int, float]:
        """Seconds during which n tasks were running, from the run's first job to its last: on `local[n]`,
        time at fewer than n is a core the run left idle (a serial step, a single-task stage, the driver)."""
        if not self.jobs:
            return {}
        t0, t1 = min(a for a, _ in self.jobs), max(b for _, b in self.jobs)
        edges = sorted([*((a, 1) for a, _ in self.tasks), *((b, -1) for _, b in self.tasks)])
        spent: dict[int, float] = {}
        running, last = 0, t0
        for at, step in edges:
            spent[running] = spent.get(running, 0.0) + (at - last) / 1000
            running, last = running + step, at
        spent[running] = spent.get(running, 0.0) + (t1 - last) / 1000
        return dict(sorted(spent.items()))


def run_profiles(event_log_dir: Path) -> dict[str, RunProfile]:
    """Per run (``RUN_PROPERTY``), from the session's Spark event log: executor CPU seconds and task spans.

    Task CPU time is what the work costs the executors; unlike wall time it hardly moves when other processes
    share the cores, so the job-to-floor ratio in CPU seconds is the steadier figure on a busy machine.
    """
    stage_run: dict[int, str] = {}
    job_run: dict[int, str] = {}
    submitted: dict[int, int] = {}
    runs: dict[str, RunProfile] = {}
    files: list[Path] = []
    for entry in sorted(event_log_dir.iterdir()):  # Spark 4 writes a directory of rolled events_<n>_... files
        rolled = [f for f in entry.iterdir() if f.name.startswith("events_")] if entry.is_dir() else [entry]
        files += sorted(rolled, key=lambda f: int(f.name.split("_")[1]) if f.name.startswith("events_") else 0)
    for log in files:
        with log.open(encoding="utf-8") as events:
            for line in events:
                if '"SparkListenerJobStart"' in line:
                    event = json.loads(line)
                    name = (event.get("Properties") or {}).get(RUN_PROPERTY)
                    if name:
                        stage_run.update((stage, name) for stage in event["Stage IDs"])
                        job_run[event["Job ID"]] = name
                        submitted[event["Job ID"]] = event["Submission Time"]
                elif '"SparkListenerJobEnd"' in line:
                    event = json.loads(line)
                    name = job_run.get(event["Job ID"])
                    if name:
                        runs.setdefault(name, RunProfile()).jobs.append(
                            (submitted[event["Job ID"]], event["Completion Time"]))
                elif '"SparkListenerTaskEnd"' in line:
                    event = json.loads(line)
                    name = stage_run.get(event["Stage ID"])
                    if name:
                        run = runs.setdefault(name, RunProfile())
                        run.cpu_s += (event.get("Task Metrics") or {}).get("Executor CPU Time", 0) / 1e9
                        info = event["Task Info"]
                        run.tasks.append((info["Launch Time"], info["Finish Time"]))
    return runs


def spark_runs(logs: dict[int, Path], master: str, parsers: list[str], work: Path, per_table: bool = False,
               ) -> dict[int, tuple[float, dict[str, float], dict[str, float]]]:
    """Per size: (seconds of spark.read.text().count(), seconds of the whole job per parser, executor CPU
    seconds per run: ``floor`` and each parser), one session."""
    event_log = work / f"eventlog-{master.replace('[', '').replace(']', '')}-{time.time_ns()}"
    event_log.mkdir(parents=True)
    spark = build_session(master, app_name="bench-analytics", progress=False, parser="jvm", extra={
        "spark.eventLog.enabled": "true", "spark.eventLog.dir": str(event_log),
        "spark.eventLog.compress": "false"})
    spark.sparkContext.setLogLevel("ERROR")
    timed = {}
    try:
        spark.read.text(str(logs[min(logs)])).count()  # warm the JVM once before timing anything
        for parser in parsers:  # and each path (JIT, Python workers) with one untimed job on the smallest log
            run(spark, JobConfig(inputs=[str(logs[min(logs)])], out=work / f"warm-{parser}", cluster="bench",
                                 parser=parser, report=False))
        for size, path in sorted(logs.items()):
            spark.sparkContext.setLocalProperty(RUN_PROPERTY, f"{size}:floor")
            started = time.perf_counter()
            spark.read.text(str(path)).count()
            floor = time.perf_counter() - started
            jobs = {}
            for parser in parsers:
                spark.sparkContext.setLocalProperty(RUN_PROPERTY, f"{size}:{parser}")
                started = time.perf_counter()
                with StepTimer() as steps:
                    result = run(spark, JobConfig(inputs=[str(path)], out=work / f"out-{size}-{parser}",
                                                  cluster="bench", parser=parser))
                jobs[parser] = time.perf_counter() - started
                assert not result.warnings or parser == "python", result.warnings
                if per_table:
                    print(f"  {master} {size:,} lines, {parser} parser, seconds per step: {steps.line()}", flush=True)
            spark.sparkContext.setLocalProperty(RUN_PROPERTY, None)
            timed[size] = (floor, jobs)
            print(f"{master} {size:,} lines: read.text().count() {floor:.1f} s, "
                  + ", ".join(f"job ({p} parser) {s:.1f} s" for p, s in jobs.items()), flush=True)
    finally:
        spark.stop()  # the event log is complete once the session has stopped
    profiles = run_profiles(event_log)
    results = {size: (floor, jobs, {run: profiles.get(f"{size}:{run}", RunProfile()).cpu_s
                                    for run in ("floor", *parsers)})
               for size, (floor, jobs) in timed.items()}
    for size, (_, _, runs) in sorted(results.items()):
        print(f"{master} {size:,} lines, executor CPU: " + ", ".join(f"{r} {s:.2f} s" for r, s in runs.items()),
              flush=True)
        for parser in parsers:
            busy = profiles.get(f"{size}:{parser}", RunProfile()).concurrency()
            print(f"{master} {size:,} lines, {parser} job, seconds with n tasks running: "
                  + ", ".join(f"{n}: {s:.1f}" for n, s in busy.items()), flush=True)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000,1000000",
                        help="Comma-separated line counts (the growth table; 10000000 takes many minutes).")
    parser.add_argument("--masters", default="local[1],local[2]")
    parser.add_argument("--parsers", default="jvm,python", help="Parsers of the job to time (jvm, python).")
    parser.add_argument("--workdir", type=Path, default=None, help="Keep the logs and output here.")
    parser.add_argument("--per-table", action="store_true",
                        help="Also print each timed job's seconds per table written and per collect (in the order "
                             "they end: tables written concurrently share the time).")
    parser.add_argument("--event-log", type=Path, metavar="DIR",
                        help="Only read a kept session's event log (WORKDIR/eventlog-...): each run's executor CPU and "
                             "seconds with n tasks running; runs nothing.")
    args = parser.parse_args()
    if args.event_log:
        for name, profile in sorted(run_profiles(args.event_log).items()):
            print(f"{name}: executor CPU {profile.cpu_s:.2f} s, seconds with n tasks running: "
                  + ", ".join(f"{n}: {s:.1f}" for n, s in profile.concurrency().items()))
        return 0
    work = args.workdir or Path(tempfile.mkdtemp(prefix="bench-analytics-"))
    work.mkdir(parents=True, exist_ok=True)
    logs: dict[int, Path] = {}
    for size in (int(x) for x in args.sizes.split(",")):
        log, count = work / f"log-{size}.log", work / f"log-{size}.lines"
        if not (log.exists() and count.exists()):
            started = time.perf_counter()
            count.write_text(str(generate(log, size)))
            print(f"generated {size:,} lines ({log.stat().st_size / 2**20:.0f} MiB) in "
                  f"{time.perf_counter() - started:.1f} s", flush=True)
        logs[int(count.read_text())] = log
    python = {}
    for size, log in sorted(logs.items()):
        seconds, _, _ = python_baseline(log)
        python[size] = seconds
        print(f"python {size:,} lines: {seconds:.1f} s, {size / seconds:,.0f} lines/s", flush=True)
    masters, parsers = args.masters.split(","), args.parsers.split(",")
    spark = {master: spark_runs(logs, master, parsers, work, args.per_table) for master in masters}
    print("\n| lines | master | read.text().count() (lines/s) | "
          + " | ".join(f"job, {p} parser (lines/s) | {p} job / floor" for p in parsers)
          + " | job vs single-process Python parse |")
    print("|---:|---|---:|" + "---:|---:|" * len(parsers) + "---:|")
    for size in sorted(logs):
        for m in masters:
            floor, jobs, _ = spark[m][size]
            cells = [f"{size:,}", m, f"{size / floor:,.0f}"]
            for p in parsers:
                cells += [f"{size / jobs[p]:,.0f}", f"{jobs[p] / floor:.1f}x"]
            cells.append(f"{python[size] / min(jobs.values()):.2f}x")
            print("| " + " | ".join(cells) + " |")
    print("\nExecutor CPU seconds (task CPU time, from Spark's event log), the same runs:\n")
    print("| lines | master | read.text().count() | " + " | ".join(f"job, {p} parser | CPU / floor" for p in parsers)
          + " |")
    print("|---:|---|---:|" + "---:|---:|" * len(parsers))
    for size in sorted(logs):
        for m in masters:
            cpu = spark[m][size][2]
            cells = [f"{size:,}", m, f"{cpu['floor']:.2f} s"]
            for p in parsers:
                cells += [f"{cpu[p]:.2f} s", f"{cpu[p] / cpu['floor']:.0f}x" if cpu["floor"] else "-"]
            print("| " + " | ".join(cells) + " |")
    if {"local[1]", "local[2]"} <= set(masters):
        for p in parsers:
            print(f"local[1] -> local[2], {p} parser: " + ", ".join(
                f"{size:,}: {spark['local[1]'][size][1][p] / spark['local[2]'][size][1][p]:.2f}x"
                for size in sorted(logs)))
    if len(parsers) > 1:
        for m in masters:
            print(f"{m}, job with {parsers[0]} parser vs {parsers[1]} parser: " + ", ".join(
                f"{size:,}: {spark[m][size][1][parsers[1]] / spark[m][size][1][parsers[0]]:.1f}x"
                for size in sorted(logs)))
    if args.workdir is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
