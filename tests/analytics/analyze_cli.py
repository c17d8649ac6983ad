"""What the tests of ``zkcontroller analyze`` and of the spark-submit entry (``job.main``) share: a one-line log
and a way to run the CLI that lets only a usage exit through (the fixtures ``log`` and ``no_spark`` are in
conftest.py)."""

from __future__ import annotations

from click.testing import CliRunner

from zkcontroller.analytics.cli import analyze

LINE = "[2024-01-01 00:00:00,000] INFO [Controller id=1] Resigned (kafka.controller.KafkaController)\n"


class SparkStarted(Exception):
    """Raised where Spark would start: every check before it passed."""


def run_analyze(args: list[str]) -> tuple[int, str]:
    """``zkcontroller analyze ARGS``: its exit code and output; any exception but an exit fails the test."""
    result = CliRunner().invoke(analyze, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.output
