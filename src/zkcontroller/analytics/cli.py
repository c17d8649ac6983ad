"""``zkcontroller analyze``: the Spark batch job behind a click command (pyspark is imported lazily)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from zkcontroller.analytics.controller_timeline import DEFAULT_RESTART_GAP_MS, DEFAULT_STORM_ELECTIONS


def _cluster_pattern(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    from zkcontroller.analytics.sources import cluster_pattern

    try:
        return None if value is None else cluster_pattern(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from exc


@click.command("analyze", short_help="Spark job: event and Kafka logs to tables and a report.")
@click.argument("inputs", nargs=-1, required=True)
@click.option("--out", "out", required=True, type=click.Path(path_type=Path, file_okay=False),
              help="Directory for the Parquet tables and report.html.")
@click.option("--master", default=None,
              help="Spark master URL (default local[*]), e.g. local[2] or spark://HOST:7077 (standalone).")
@click.option("--cluster", default=None, help="Cluster name for every Kafka log line (default: see --cluster-pattern).")
@click.option("--cluster-pattern", default=None, callback=_cluster_pattern,
              help="Regex on the file path whose group 1 names the cluster (default: the cluster of an event log "
                   "in the same directory, else the parent directory's name).")
@click.option("--slow-event-ms", default=1000, show_default=True, type=click.IntRange(0),
              help="Controller events queued+processed longer than this are anomalies.")
@click.option("--min-leaderless-ms", default=100, show_default=True, type=click.IntRange(0),
              help="Shorter leaderless intervals are not listed as anomalies (they still count in totals).")
@click.option("--restart-gap-ms", default=DEFAULT_RESTART_GAP_MS, show_default=True, type=click.IntRange(0),
              help="No controller for longer than this is a cluster restart, not a failover.")
@click.option("--storm-elections", default=DEFAULT_STORM_ELECTIONS, show_default=True, type=click.IntRange(1),
              help="This many controller elections within a minute is an election storm.")
@click.option("--max-handling-ms", default=60_000, show_default=True, type=click.IntRange(0),
              help="A broker failure's handling ends at the next membership change, the controller's next "
                   "event for another reason (an election an admin asked for), or after this long.")
@click.option("--spark-ui/--no-spark-ui", default=False, show_default=True,
              help="Serve Spark's web UI (on 127.0.0.1) while the job runs.")
@click.option("--report/--no-report", default=True, show_default=True, help="Write report.html.")
@click.option("--parser", type=click.Choice(["jvm", "python"]), default="jvm", show_default=True,
              help="Parse Kafka-format logs in Spark's JVM (needs javac once, to build the parser) or with the "
                   "pure-Python reference parser in Python workers (slower, same rows).")
def analyze(inputs: tuple[str, ...], out: Path, master: str | None, cluster: str | None,
            cluster_pattern: str | None, slow_event_ms: int, min_leaderless_ms: int, restart_gap_ms: int,
            storm_elections: int, max_handling_ms: int, spark_ui: bool, report: bool, parser: str) -> None:
    """Analyze JSONL event logs and Kafka controller/state-change logs (files, directories, globs, .gz).

    Writes one Parquet directory per table under OUT, plus OUT/report.html and one page per cluster.
    """
    from zkcontroller.analytics.sources import CLUSTER_OPTIONS_CONFLICT

    if cluster is not None and cluster_pattern is not None:
        raise click.UsageError(CLUSTER_OPTIONS_CONFLICT)
    from zkcontroller.analytics.job import check_arguments
    from zkcontroller.analytics.sources import InputError

    try:  # fail fast, before starting a JVM, on a bad master, a missing, empty or unreadable input, or --out
        check_arguments(list(inputs), out, master)
    except InputError as exc:
        raise click.ClickException(str(exc)) from exc
    from zkcontroller.analytics.job import (
        JobConfig,
        at_terminal,
        build_session,
        outcome_lines,
        run,
        spark_error_line,
    )

    click.echo(f"analyze: starting Spark ({master or 'local[*]'})", err=True)
    try:
        # Spark's progress bar redraws one terminal line with \r: into a file or pipe it wrote hundreds of
        # "[Stage N:>  (0 + 2) / 4]" fragments between the job's own lines
        spark = build_session(master, ui=spark_ui, parser=parser, progress=at_terminal(sys.stderr))
    except Exception as exc:  # e.g. a standalone master nobody answers at: Spark gives up after about a minute
        raise click.ClickException(f"could not start Spark on {master or 'local[*]'}: {spark_error_line(exc)}") from exc
    try:
        result = run(spark, JobConfig(
            inputs=list(inputs), out=out, master=master, cluster=cluster, cluster_pattern=cluster_pattern,
            slow_event_ms=slow_event_ms, min_leaderless_ms=min_leaderless_ms, restart_gap_ms=restart_gap_ms,
            storm_elections=storm_elections, max_handling_ms=max_handling_ms, report=report, parser=parser),
            progress=lambda text: click.echo(f"analyze: {text}", err=True))
    except InputError as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        spark.stop()
    warnings, summary = outcome_lines(result)
    for line in warnings:
        click.echo(line, err=True)
    for line in summary:
        click.echo(line)

