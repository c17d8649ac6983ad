"""``--port-base N`` of ``demo`` and ``cluster``: N + the largest broker id must be a port.

Past 65535 the listener fell back to a free port and the start-up lines said "(65536 was taken)", blaming a
process that did not exist. Refused before anything starts."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from zkcontroller.cli import _check_ports_fit, main
from zkcontroller.cluster.listener import ListenerPorts

pytestmark = pytest.mark.usefixtures("restored_logging")  # the CLI run in-process sets kazoo's level


@pytest.mark.parametrize("command", [["demo"], ["cluster", "--brokers", "3"]])
def test_a_base_that_pushes_a_broker_past_65535_is_a_usage_error(command: list[str]) -> None:
    result = CliRunner().invoke(main, [*command, "--port-base", "65534"])
    assert result.exit_code == 2, result.output
    assert ("Invalid value for --port-base: broker 3 would listen on 65534+3 = 65537, past 65535: give a base of at "
            "most 65532, or 0 for free ports") in result.output


def test_the_highest_port_and_free_ports_pass() -> None:
    _check_ports_fit(ListenerPorts(base=65532), [1, 2, 3])
    _check_ports_fit(ListenerPorts(base=None), [1000])
    _check_ports_fit(None, [1000])
