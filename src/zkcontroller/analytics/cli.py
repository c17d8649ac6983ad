"""``zkcontroller analyze``: the Spark batch job behind a click command (pyspark is imported lazily)."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("analyze")
@click.argument("inputs", nargs=-1, required=True)
@click.option("--out", "out", required=True, type=click.Path(path_type=Path, file_okay=False),
              help="Directory for the Parquet tables and report.html.")
@click.option("--master", default=None, help="Spark master URL (default local[*]), e.g. spark://host:7077.")
@click.option("--cluster", default=None, help="Cluster name for every Kafka log line (default: parent dir).")
@click.option("--cluster-pattern", default=None,
              help="Regex on the file path whose group 1 names the cluster (falls back to the parent dir).")
@click.option("--slow-event-ms", default=1000, show_default=True, type=int,
              help="Controller events queued+processed longer than this are anomalies.")
@click.option("--report/--no-report", default=True, show_default=True, help="Write report.html.")
def analyze(inputs: tuple[str, ...], out: Path, master: str | None, cluster: str | None,
            cluster_pattern: str | None, slow_event_ms: int, report: bool) -> None:
    """Analyze JSONL event logs and Kafka controller/state-change logs (files, directories, globs, .gz).

    Writes one Parquet directory per table under OUT, plus OUT/report.html.
    """
    from zkcontroller.analytics.extract import InputError, resolve_inputs

    try:  # fail fast, before starting a JVM, on a missing or empty input
        resolve_inputs(list(inputs))
    except InputError as exc:
        raise click.ClickException(str(exc)) from exc
    from zkcontroller.analytics.job import JobConfig, build_session, run

    spark = build_session(master)
    try:
        result = run(spark, JobConfig(
            inputs=list(inputs), out=out, master=master, cluster=cluster, cluster_pattern=cluster_pattern,
            slow_event_ms=slow_event_ms, report=report))
    except InputError as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        spark.stop()
    for name, count in result.rows.items():
        click.echo(f"{name:28} {count:>10} rows")
    if result.report:
        click.echo(f"report: {result.report}")
    click.echo(f"done in {result.seconds:.1f} s")
