"""``zkcontroller broker`` takes its server.properties as kafka-server-start.sh does (first, positional; --config
stays), and its usage errors exit 1 as Kafka's ``printUsageAndDie``: it took only ``--config`` and exited 2."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from zkcontroller.cli import main

pytestmark = pytest.mark.usefixtures("restored_logging")  # the CLI run in-process sets kazoo's level


@pytest.mark.parametrize(("args", "message"), [
    ([], "give server.properties (first, as kafka-server-start.sh takes it) or --config FILE"),
    (["a.properties", "--config", "b.properties"], "or --config FILE, not both"),
    (["--no-such-option"], "No such option '--no-such-option'"),
])
def test_usage_errors_exit_1(args: list[str], message: str) -> None:
    result = CliRunner().invoke(main, ["broker", *args])
    assert result.exit_code == 1, result.output
    assert message in result.output


@pytest.mark.parametrize("form", ["positional", "option"])
@pytest.mark.usefixtures("restored_logging")  # the command sets up the broker's logging (Kafka's layout) on the root
def test_the_properties_file_is_read_either_way(tmp_path: Path, form: str) -> None:
    """A file without zookeeper.connect fails the same way given first or with --config: it was read."""
    props = tmp_path / "server.properties"
    props.write_text("broker.id=1\n")
    args = [str(props)] if form == "positional" else ["--config", str(props)]
    result = CliRunner().invoke(main, ["broker", *args, "--override", "broker.id=2"])
    assert result.exit_code == 1, result.output
    assert "zookeeper.connect" in result.output
