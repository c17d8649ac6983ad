"""``zkcontroller sim run`` and ``zkcontroller sim sweep``."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from zkcontroller.runtime.files import ensure_writable_dir
from zkcontroller.sim.hints import as_typed
from zkcontroller.sim.world import MUTATIONS

if TYPE_CHECKING:
    from zkcontroller.sim.world import SimConfig


def _scenario_names() -> list[str]:
    from zkcontroller.sim.scenarios import SCENARIOS

    return list(SCENARIOS)


def _options(f: Callable[..., Any]) -> Callable[..., Any]:
    for option in reversed([
        click.option("--scenario", required=True, type=click.Choice(_scenario_names()), help="Scenario name."),
        click.option("--brokers", type=click.IntRange(1, 50), default=3, show_default=True,
                     help="Brokers in the simulated cluster (ids 1..N)."),
        click.option("--partitions", type=click.IntRange(1, 100_000), default=20, show_default=True,
                     help="Partitions the workload creates, split over two topics."),
        click.option("--duration-ms", type=click.IntRange(0), default=60_000, show_default=True,
                     help="Virtual time of faults, before the heal and the liveness check."),
        click.option("--fault-interval-ms", type=click.IntRange(1), default=10_000, show_default=True,
                     help="Virtual time between a scenario's injected faults."),
        click.option("--session-timeout-ms", type=click.IntRange(100), default=6_000, show_default=True,
                     help="The brokers' ZooKeeper session timeout."),
        click.option("--mutation", "mutations", multiple=True, type=click.Choice(MUTATIONS),
                     help="Switch off a safety check, to prove the invariants catch it."),
    ]):
        f = option(f)
    return f


def _config(scenario: str, seed: int, brokers: int, partitions: int, duration_ms: int, fault_interval_ms: int,
            session_timeout_ms: int, mutations: tuple[str, ...], log_dir: Path | None = None) -> SimConfig:
    from zkcontroller.sim.world import SimConfig

    return SimConfig(scenario, seed, brokers=brokers, partitions=partitions, duration_ms=duration_ms,
                     fault_interval_ms=fault_interval_ms, session_timeout_ms=session_timeout_ms,
                     mutations=tuple(mutations), log_dir=log_dir)


def _writable_dir(path: Path, option: str) -> None:
    """Create ``path`` and write a file in it now, so a bad directory is one line before the run, not a
    traceback after it (the logs and the sweep's table are opened only once the seeds have run)."""
    try:
        ensure_writable_dir(path)
    except OSError as exc:
        raise click.ClickException(f"{option} {path}: directory is not writable ({exc.strerror or exc})") from exc


def _no_earlier_run(log_dir: Path) -> None:
    """Refuse a --log-dir that holds a run's logs: the log files append, and every run starts at the same virtual
    instant, so two runs' lines would interleave into one impossible timeline for `analyze` (epochs going back,
    the second run's Kafka lines named after the first run's cluster)."""
    held = sorted(p.name for name in ("controller.log*", "state-change.log*", "events*.jsonl")
                  for p in log_dir.glob(name) if p.is_file() and p.stat().st_size > 0)
    if held:
        raise click.ClickException(f"--log-dir {log_dir} already holds a run's logs ({', '.join(held)}); a run "
                                   "appends to them: give an empty or new directory")


@click.group(short_help="The simulator: virtual time, injected faults.")
def sim() -> None:
    """The deterministic simulator: the controller and brokers on virtual time, with injected faults."""


@sim.command()
@_options
@click.option("--seed", type=int, required=True, help="Seed of the fault schedule and every random choice.")
@click.option("--log-dir", type=click.Path(file_okay=False, path_type=Path),
              help="Write state-change.log, controller.log, server.log and events.jsonl here (default: a new temp "
                   "dir).")
def run(log_dir: Path | None, seed: int, **options: object) -> None:
    """Run one scenario on one seed; exit status 1 on a violation."""
    from zkcontroller.sim.report import format_result
    from zkcontroller.sim.world import run_scenario

    if log_dir is not None:
        _writable_dir(log_dir, "--log-dir")
        _no_earlier_run(log_dir)
    log_dir = log_dir or Path(tempfile.mkdtemp(prefix="zkcontroller-sim-"))
    result = run_scenario(_config(seed=seed, log_dir=log_dir, **options))  # type: ignore[arg-type]
    click.echo(format_result(result))
    click.echo(f"logs            {log_dir} ({as_typed(f'zkcontroller analyze {log_dir} --out {log_dir}/analysis')})")
    if not result.ok:
        raise SystemExit(1)


@sim.command()
@_options
@click.option("--seeds", type=click.IntRange(1), required=True, help="How many seeds.")
@click.option("--first-seed", type=int, default=0, show_default=True, help="The first seed; the rest follow it.")
@click.option("--workers", type=click.IntRange(1), help="Worker processes (default: one per core; not with --spark).")
@click.option("--spark", is_flag=True, help="Run the seeds as Spark tasks instead of worker processes.")
@click.option("--master", help="Spark master URL (with --spark; default local[*]).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("sim-sweep"),
              show_default=True, help="Where runs.parquet and summary.json go.")
def sweep(seeds: int, first_seed: int, workers: int | None, spark: bool, master: str | None, out: Path,
          **options: object) -> None:
    """Run one scenario over many seeds in parallel; write a Parquet table and a summary."""
    from zkcontroller.sim.sweep import SparkStartError
    from zkcontroller.sim.sweep import sweep as run_sweep

    if master and not spark:
        raise click.BadParameter("--master needs --spark")
    if workers is not None and spark:  # Spark's master decides how many seeds run at once
        raise click.BadParameter("--workers is for worker processes; with --spark, the master sets the "
                                 "parallelism (e.g. --master local[2])")
    if master:
        from zkcontroller.analytics.job import check_master

        try:
            check_master(master)
        except ValueError as exc:
            raise click.ClickException(str(exc)) from exc
    _writable_dir(out, "--out")
    template = _config(seed=first_seed, **options)  # type: ignore[arg-type]
    try:
        _, summary = run_sweep(template, first_seed, seeds, out, spark=spark, master=master, workers=workers)
    except SparkStartError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"scenario {summary.scenario}: {summary.seeds} seeds on {summary.mode} in {summary.wall_s:.1f} s "
               f"({summary.seeds_per_minute:.0f} seeds/minute, {summary.virtual_s:.0f} virtual seconds)")
    click.echo(f"seeds with violations: {len(summary.failing_seeds)} {summary.failing_seeds[:20]}")
    if summary.unclean_elections:
        click.echo(f"unclean leader elections: {summary.unclean_elections}")
    for invariant, count in summary.violations_by_invariant.items():
        click.echo(f"  {invariant}: {count}")
    for command in summary.replay[:10]:
        click.echo(f"  replay: {as_typed(command)}")
    click.echo(f"table: {out / 'runs.parquet'}  summary: {out / 'summary.json'}")
    mutations = template.mutations
    if mutations:  # the seeds fail by the injected fault: no regression of the code, nothing to keep
        named = ", ".join(mutations)
        if summary.failing_seeds:
            click.echo(f"the invariants caught the mutation {named} in {len(summary.failing_seeds)} of "
                       f"{summary.seeds} seeds")
        else:
            click.echo(f"the invariants did not catch the mutation {named} in any of {summary.seeds} seeds")
    elif summary.failing_seeds:
        click.echo("keep these seeds as regression tests in tests/sim/regression_seeds.json")
    if summary.failing_seeds:
        raise SystemExit(1)
