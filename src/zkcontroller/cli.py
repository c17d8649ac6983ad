"""The ``zkcontroller`` command line: one entry point with a subcommand per job."""

from __future__ import annotations

import asyncio
import logging
import signal

import click

from zkcontroller.admin.cli import brokers, controller, topics
from zkcontroller.analytics.cli import analyze
from zkcontroller.coordination.backend import CoordinationBackend, EmbeddedBackend, ZooKeeperBackend
from zkcontroller.runtime.clock import wall_clock_ms


@click.group()
@click.version_option(package_name="zkcontroller")
def main() -> None:
    """Apache Kafka's ZooKeeper-mode controller, reimplemented in Python."""
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # kazoo narrates every reconnect attempt at WARNING; session changes reach us through our own API.
    logging.getLogger("kazoo.client").setLevel(logging.ERROR)


def make_backend(zookeeper: str | None) -> CoordinationBackend:
    """The embedded store by default; a real ZooKeeper (``host:port[,...][/chroot]``) when named."""
    if zookeeper is None:
        return EmbeddedBackend(wall_clock_ms)
    hosts, _, chroot = zookeeper.partition("/")
    return ZooKeeperBackend(hosts, f"/{chroot}" if chroot else "")


@main.command()
@click.option(
    "--zookeeper", metavar="HOST:PORT[/CHROOT]", help="Use a real ZooKeeper instead of the embedded store."
)
@click.option("--broker-ids", default="1,2,3", show_default=True, help="Comma-separated broker ids.")
def demo(zookeeper: str | None, broker_ids: str) -> None:
    """Brokers register, elect a controller, lose it to session expiry and fail over."""
    from zkcontroller.demo import run_demo

    try:
        ids = sorted({int(x) for x in broker_ids.split(",") if x.strip()})
    except ValueError as e:
        raise click.BadParameter(f"broker ids must be integers: {broker_ids!r}") from e
    if len(ids) < 2:
        raise click.BadParameter("the failover demo needs at least two brokers")
    asyncio.run(run_demo(make_backend(zookeeper), ids))


@main.command()
@click.option("--port", type=int, default=2181, show_default=True)
@click.option("--data-dir", type=click.Path(file_okay=False), help="Keep data here (default: a temp dir).")
def zookeeper(port: int, data_dir: str | None) -> None:
    """Run a local ZooKeeper server (Debian's package) on 127.0.0.1 until interrupted."""
    from pathlib import Path

    from zkcontroller.runtime.zookeeper_server import ZooKeeperServerProcess

    server = ZooKeeperServerProcess(Path(data_dir) if data_dir else None, port)
    signal.signal(signal.SIGTERM, _raise_keyboard_interrupt)  # stop the child server on `kill` too
    server.start()
    click.echo(f"ZooKeeper listening on {server.connect_string} (Ctrl-C to stop)")
    try:
        server.wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.cleanup()


def _raise_keyboard_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


main.add_command(analyze)
for _command in (topics, brokers, controller):
    main.add_command(_command)


if __name__ == "__main__":  # pragma: no cover
    main()
