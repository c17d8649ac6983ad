"""``zkcontroller demo`` says what is about to happen, and it happens: the expired session is the controller's,
so the narration announces the election it causes (it said only "it re-registers with a new broker epoch",
then printed an unexplained "controller: broker 3, epoch 3"); and the controller's broker is stopped as Kafka stops
a broker, with a controlled shutdown (the demo had it off, so the analysis read "Stop broker 1" as a failure)."""

from __future__ import annotations

import re
import socket
from pathlib import Path

import pytest
from click.testing import CliRunner

from zkcontroller.cli import main

pytestmark = [pytest.mark.timeout(180), pytest.mark.usefixtures("restored_logging")]


@pytest.mark.parametrize("broker_ids", ["1,2,3", "1,2"])
def test_the_expired_session_is_the_controllers_and_the_election_it_causes_is_announced(
    broker_ids: str, tmp_path: Path
) -> None:
    result = CliRunner().invoke(main, ["demo", "--broker-ids", broker_ids, "--log-dir", str(tmp_path),
                                       "--listen-host", "0.0.0.0", "--port-base", "0"])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "== Stop broker 1, the controller, with a controlled shutdown" in out
    second = re.search(r"> stop 1\nstop 1: controlled shutdown, handing its leadership to other brokers [^\n]*\n"
                       r"stop 1: done\ncontroller: broker (\d+), epoch 2\n", out)
    assert second is not None, out
    expired = second.group(1)
    title = (f"== Expire broker {expired}'s ZooKeeper session, the controller's now: it resigns and re-registers "
             "with a new broker epoch, and a new election makes epoch 3")
    assert title in out
    after = out[out.index(title):]
    assert re.search(rf"> expire {expired}\nexpire {expired}: done\ncontroller: broker \d+, epoch 3\n", after), after
    controller_log = (tmp_path / "controller.log").read_text()
    assert "[Controller id=1] Shutting down broker 1" in controller_log  # the controller took it
    assert '"strategy":"controlled_shutdown"' in (tmp_path / "events.jsonl").read_text()  # leadership moved by it
    # --listen-host reaches the demo's brokers too
    assert "broker 1 listens on 0.0.0.0:" in out and f", advertised as {socket.getfqdn()}:" in out
