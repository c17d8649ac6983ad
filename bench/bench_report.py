"""The HTML report alone, on the tables of a finished `zkcontroller analyze` run: CPU, wall time and peak
resident memory of `write_report`, beside its floor, the bare Arrow read of the same Parquet tables.

The report runs on the driver after every Spark job, so its time is serial on any master. Each figure comes
from a fresh process (peak RSS is per process), report and floor alternating, so a busy machine slows both
alike. The report's pages are rewritten in place under each OUT directory.

    uv run python bench/bench_report.py OUT [OUT ...] [--rounds 3]

OUT: an `analyze --out` directory, e.g. `bench_analytics.py --workdir W` leaves `W/out-<lines>-jvm`.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

# What `report.write_report` reads: whole tables, and the per-cluster tables it shows the first rows of.
READ_WHOLE = ("controller_tenures", "incidents", "broker_failures", "sources", "split_brain_windows",
              "leaderless_partitions_over_time", "leaders_per_broker_over_time", "topic_deletions",
              "partition_reassignments", "controlled_shutdowns", "rejected_lines")
READ_PER_CLUSTER = ("anomalies", "leader_elections", "isr_changes")


def _windows(out: Path) -> dict[str, tuple[int, int]]:
    """Each cluster's first and last event time, as the job hands them to the report (set-up, not timed)."""
    import pyarrow.compute as pc
    import pyarrow.dataset as ds

    events = ds.dataset(out / "events", format="parquet", partitioning="hive").to_table(columns=["cluster", "ts_ms"])
    spans = events.group_by("cluster").aggregate([("ts_ms", "min"), ("ts_ms", "max")])
    return {str(c): (int(lo), int(hi)) for c, lo, hi in zip(
        spans["cluster"].to_pylist(), pc.cast(spans["ts_ms_min"], "int64").to_pylist(),
        pc.cast(spans["ts_ms_max"], "int64").to_pylist(), strict=True)}


def _floor(out: Path) -> int:
    """The bare read: every table the report reads, whole, into Arrow; returns the rows read."""
    import pyarrow.dataset as ds

    rows = 0
    for name in (*READ_WHOLE, *READ_PER_CLUSTER):
        if (out / name).exists():
            rows += ds.dataset(out / name, format="parquet", partitioning="hive").to_table().num_rows
    return rows


def _report(out: Path, windows: dict[str, tuple[int, int]]) -> int:
    from types import SimpleNamespace

    from zkcontroller.analytics.report import write_report

    config = SimpleNamespace(inputs=[str(out)])
    write_report(out, {}, config, [], {}, windows)
    return len(windows)


def child(mode: str, out: Path) -> None:
    """One measurement in this process: prints a JSON line. Imports come first, untimed: the job has them
    loaded by the time it writes the report."""
    import pyarrow.dataset  # noqa: F401

    import zkcontroller.analytics.report  # noqa: F401

    windows = _windows(out) if mode == "report" else {}
    cpu0, wall0 = time.process_time(), time.perf_counter()
    count = _report(out, windows) if mode == "report" else _floor(out)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"mode": mode, "cpu_s": cpu, "wall_s": wall, "peak_rss_mib": peak_mib, "count": count}))


def _run(mode: str, out: Path) -> dict[str, float]:
    done = subprocess.run([sys.executable, __file__, "--child", mode, str(out)], capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        raise SystemExit(f"{mode} on {out} failed:\n{done.stderr.strip()}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("outs", nargs="*", type=Path, help="analyze output directories")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--child", nargs=2, metavar=("MODE", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], Path(args.child[1]))
        return 0
    if not args.outs:
        parser.error("name at least one analyze output directory")
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    for out in args.outs:
        if not (out / "events").is_dir():
            parser.error(f"{out}: no events table (not an analyze --out directory?)")
    print(f"{'output':<40} {'round':>5} {'report CPU s':>13} {'wall s':>7} {'peak MiB':>9} "
          f"{'floor CPU s':>12} {'floor MiB':>10} {'report/floor':>13}")
    for out in args.outs:
        for i in range(1, args.rounds + 1):
            floor, report = _run("floor", out), _run("report", out)
            ratio = report["cpu_s"] / floor["cpu_s"] if floor["cpu_s"] > 0 else float("inf")
            print(f"{out!s:<40} {i:>5} {report['cpu_s']:>13.2f} {report['wall_s']:>7.2f} "
                  f"{report['peak_rss_mib']:>9.0f} {floor['cpu_s']:>12.2f} {floor['peak_rss_mib']:>10.0f} "
                  f"{ratio:>12.1f}x", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
