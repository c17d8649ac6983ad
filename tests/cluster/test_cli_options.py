"""``zkcontroller cluster``'s options refuse what they cannot honour, before any broker starts."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from zkcontroller.cli import main

pytestmark = pytest.mark.usefixtures("restored_logging")  # the CLI run in-process sets kazoo's level


@pytest.mark.parametrize("argv, message", [
    # 1,2 won over --brokers 5 without a word
    (["cluster", "--brokers", "5", "--broker-ids", "1,2"], "give --brokers N or --broker-ids 1,2,3, not both"),
    # a negative or zero session timeout was taken as given
    (["cluster", "--session-timeout-ms", "-5"], "Invalid value for '--session-timeout-ms': -5 is not in the range"),
    (["cluster", "--session-timeout-ms", "0"], "Invalid value for '--session-timeout-ms': 0 is not in the range"),
    # 1,1 started one broker: the second could never have registered under /brokers/ids/1
    (["cluster", "--broker-ids", "1,2,1"], "broker ids must differ; given more than once: 1"),
    (["cluster", "--broker-ids", "1,x"], "broker ids must be integers: '1,x'"),
])
def test_cluster_refuses_options_it_cannot_honour(argv: list[str], message: str) -> None:
    result = CliRunner().invoke(main, argv)
    assert result.exit_code == 2, result.output
    assert message in result.output


def test_the_session_timeout_says_what_it_is() -> None:
    result = CliRunner().invoke(main, ["cluster", "--help"])
    assert "zookeeper.session.timeout.ms" in " ".join(result.output.split())
