"""``--under-min-isr-partitions`` and ``--at-min-isr-partitions`` with ``--zookeeper``: kafka-topics 2.8 refuses
them (TopicCommand.checkArgs adds zkConnectOpt to their invalid options), saying so in joptsimple's words, exit 1.
They used to be click's bare "No such option"."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from zkcontroller.cli import main

pytestmark = pytest.mark.usefixtures("restored_logging")


@pytest.mark.parametrize("report", ["at-min-isr-partitions", "under-min-isr-partitions"])
def test_a_min_isr_report_cannot_be_used_with_zookeeper(report: str) -> None:
    # nobody listens there: the refusal comes before any connection
    result = CliRunner().invoke(main, ["topics", "--describe", f"--{report}", "--zookeeper", "127.0.0.1:1"])
    assert result.exit_code == 1, result.output
    assert f'Error: Option "[{report}]" can\'t be used with option "[zookeeper]"' in result.output
