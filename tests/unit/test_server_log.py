"""A run's ``server.log``: Kafka's other loggers at INFO, as Kafka's root appender writes them.

Before it existed, the in-process brokers' INFO lines (fetchers added and removed, ISR shrinks, log-dir failures)
were never written anywhere: their loggers' effective level was the console's WARNING."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

from zkcontroller.cluster.logs import LogFiles


def test_kafka_broker_lines_go_to_server_log_and_controller_lines_stay_in_controller_log(tmp_path: Path) -> None:
    clock = iter(range(1767225665000, 1767225665000 + 10_000, 500))
    fetchers = logging.getLogger("kafka.server.ReplicaFetcherManager")
    client = logging.getLogger("org.apache.kafka.clients.FetchSessionHandler")
    levels_before = {name: logging.getLogger(name).level for name in ("kafka", "org.apache.kafka")}
    files = LogFiles(tmp_path, lambda: next(clock))
    try:
        fetchers.info("[ReplicaFetcherManager on broker 2] Added fetcher to broker 1 for partitions Map(t-0 -> "
                      "InitialFetchState(BrokerEndPoint(id=1, host=localhost:9092),4,0))")
        fetchers.debug("not at INFO")
        client.warning("a client warning")
        logging.getLogger("kafka.controller").info("a controller line")
    finally:
        files.close()
    server = (tmp_path / "server.log").read_text().splitlines()
    assert server == [
        "[2026-01-01 00:01:05,000] INFO [ReplicaFetcherManager on broker 2] Added fetcher to broker 1 for partitions "
        "Map(t-0 -> InitialFetchState(BrokerEndPoint(id=1, host=localhost:9092),4,0)) "
        "(kafka.server.ReplicaFetcherManager)",
        "[2026-01-01 00:01:05,500] WARN a client warning (org.apache.kafka.clients.FetchSessionHandler)",
    ]
    assert "a controller line (kafka.controller)" in (tmp_path / "controller.log").read_text()
    assert {name: logging.getLogger(name).level for name in levels_before} == levels_before
    assert not any(h for h in logging.getLogger("kafka").handlers if getattr(h, "writer", None))


def test_our_own_loggers_go_to_the_file_of_their_kafka_neighbours(tmp_path: Path) -> None:
    """Lines of ours without a Kafka counterpart carry ``zkcontroller.*`` names: the controller's land in
    ``controller.log`` (not repeated in server.log), the brokers' in ``server.log``; both at INFO."""
    clock = iter(range(1767225665000, 1767225665000 + 10_000, 500))
    names = ("zkcontroller.controller", "zkcontroller.broker")
    before = {name: (logging.getLogger(name).level, logging.getLogger(name).propagate) for name in names}
    files = LogFiles(tmp_path, lambda: next(clock))
    try:
        logging.getLogger("zkcontroller.controller.UncleanElection").warning("[Controller id=1] ours")
        logging.getLogger("zkcontroller.broker.TopicConfigManager").info("[TopicConfigManager broker=2] ours too")
        logging.getLogger("zkcontroller.broker.TopicConfigManager").debug("not at INFO")
    finally:
        files.close()
    controller = (tmp_path / "controller.log").read_text().splitlines()
    server = (tmp_path / "server.log").read_text().splitlines()
    assert controller == ["[2026-01-01 00:01:05,000] WARN [Controller id=1] ours "
                          "(zkcontroller.controller.UncleanElection)"]
    assert server == ["[2026-01-01 00:01:05,500] INFO [TopicConfigManager broker=2] ours too "
                      "(zkcontroller.broker.TopicConfigManager)"]
    assert {name: (logging.getLogger(name).level, logging.getLogger(name).propagate) for name in names} == before


def test_the_console_still_shows_only_warnings(tmp_path: Path) -> None:
    """The CLI's console handler is at WARNING, so the INFO lines server.log now gets are not printed as well
    (a fresh interpreter: pytest's own root handlers would keep the CLI's logging set-up from running)."""
    script = f"""
import logging
import subprocess
import sys
from pathlib import Path
from zkcontroller.cli import main
from zkcontroller.cluster.logs import LogFiles
main(["brokers", "--help"], standalone_mode=False)
files = LogFiles(Path({str(tmp_path)!r}))
logging.getLogger("kafka.server.ReplicaManager").info("an info line")
logging.getLogger("kafka.server.ReplicaManager").warning("a warning line")
files.close()
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "a warning line" in done.stderr
    assert "an info line" not in done.stderr
    server = (tmp_path / "server.log").read_text()
    assert "INFO an info line (kafka.server.ReplicaManager)" in server
    assert "WARN a warning line (kafka.server.ReplicaManager)" in server
