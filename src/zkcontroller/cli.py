"""The ``zkcontroller`` command line: one entry point with a subcommand per job."""

from __future__ import annotations

import click


@click.group()
@click.version_option(package_name="zkcontroller")
def main() -> None:
    """Apache Kafka's ZooKeeper-mode controller, reimplemented in Python."""


if __name__ == "__main__":  # pragma: no cover
    main()
