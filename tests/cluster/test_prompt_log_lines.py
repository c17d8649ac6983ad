"""Log lines at the ``zkcontroller cluster`` prompt: every Kafka logger's warnings (and the store client's) in
the prompt's layout, once. A failed log dir's LogManager lines, a Partition's ISR retries and the store client's
"node already exists" error reached the terminal through the root handler instead, time-stamped in another
layout between the prompt's lines."""

from __future__ import annotations

import io
import logging
import random
from pathlib import Path

import pytest
from tests.helpers import wait_until
from tests.integration.conftest import ClusterFactory

from zkcontroller.cluster.cluster_shell import ClusterShell, PromptLogHandler, PromptOut
from zkcontroller.cluster.logs import LogFiles
from zkcontroller.coordination.backend import CoordinationBackend
from zkcontroller.runtime.clock import wall_clock_ms
from zkcontroller.zk.kafka_zk_client import KafkaZkClient


def test_every_kafka_logger_and_the_store_client_show_in_the_prompts_layout(reached_root: list[str]) -> None:
    shown: list[str] = []
    with PromptLogHandler(shown.append).attached():
        logging.getLogger("kafka.log.LogManager").warning("Stopping serving logs in dir /tmp/kafka-logs-0")
        logging.getLogger("kafka.cluster.Partition").warning("[Partition t-0 broker=1] Failed to update ISR")
        logging.getLogger("zkcontroller.zk.client_brokers").error("Error while creating ephemeral at /brokers/ids/1")
        logging.getLogger("kafka.server.KafkaServer").warning("Retrying controlled shutdown")
        logging.getLogger("kafka.log.LogManager").info("Loading logs")  # below the prompt's threshold
        logging.getLogger("kafka.controller.KafkaController").warning("not an error")  # the controller: errors
    assert shown == [
        "[kafka.log.LogManager] WARN Stopping serving logs in dir /tmp/kafka-logs-0",
        "[kafka.cluster.Partition] WARN [Partition t-0 broker=1] Failed to update ISR",
        "[zkcontroller.zk.client_brokers] ERROR Error while creating ephemeral at /brokers/ids/1",
        "[kafka.server.KafkaServer] WARN Retrying controlled shutdown",
    ]
    assert reached_root == []  # each once
    assert logging.getLogger("kafka").propagate and logging.getLogger("zkcontroller").propagate  # restored


def test_a_log_line_while_the_prompt_waits_goes_below_it_and_the_prompt_comes_back() -> None:
    screen = io.StringIO()
    out = PromptOut(screen)
    out("cluster up")
    out.prompt()
    with PromptLogHandler(out).attached():
        logging.getLogger("kafka.server.ReplicaManager").warning("Broker 2 stopped fetcher")
    out.answered()  # the user's line, echoed by the terminal, ends the prompt's line
    out("created topic t")
    assert screen.getvalue() == ("cluster up\n> \n[kafka.server.ReplicaManager] WARN Broker 2 stopped fetcher\n> "
                                 "created topic t\n")


def test_a_level_lowered_to_show_warnings_is_put_back_when_the_prompt_detaches() -> None:
    """Before: a watched logger set above WARNING (``kafka`` at ERROR here) stayed at WARNING after the prompt."""
    kafka = logging.getLogger("kafka")
    kafka.setLevel(logging.ERROR)
    try:
        shown: list[str] = []
        with PromptLogHandler(shown.append).attached():
            assert kafka.level == logging.WARNING
            logging.getLogger("kafka.server.KafkaServer").warning("Retrying controlled shutdown")
        assert shown == ["[kafka.server.KafkaServer] WARN Retrying controlled shutdown"]
        assert kafka.level == logging.ERROR
    finally:
        kafka.setLevel(logging.NOTSET)


@pytest.mark.parametrize("backend", ["embedded"], indirect=True)
async def test_a_killed_leaders_followers_fetch_errors_go_to_server_log_not_the_prompt(

    make_cluster: ClusterFactory, backend: CoordinationBackend, tmp_path: Path, reached_root: list[str]
) -> None:
    """After ``kill 2`` each follower of broker 2 warned "Error in response for fetch request ... Connection to 2
    was disconnected" at the prompt on every retry until the leadership moved: a screenful a minute on the
    embedded store, whose session takes its timeout to go. Kafka logs them to server.log; so do we, and the
    prompt stays quiet. The fetcher's errors still show (`PromptLogHandler.QUIET`). The embedded store only: on
    ZooKeeper ``kill`` expires the session at once, and the leadership moves before a fetch fails."""
    logs = LogFiles(tmp_path)
    shown: list[str] = []
    fetch_error = "leaderId=2, fetcherId=0] Error in response for fetch request"
    try:
        with PromptLogHandler(shown.append).attached():
            cluster = await make_cluster([1, 2, 3])
            await cluster.wait_for_controller()
            session = await backend.new_session()
            shell = ClusterShell(cluster, KafkaZkClient(session, wall_clock_ms), out=shown.append,
                                 rng=random.Random(1))
            try:
                assert await shell.run_command("create t 3 3")
                assert await shell.run_command("kill 2")
                await wait_until(lambda: fetch_error in (tmp_path / "server.log").read_text(),
                                 what="a follower's failed fetch from broker 2 in server.log")
                logging.getLogger("kafka.server.ReplicaFetcherThread").error("Error due to")
            finally:
                await session.close()
    finally:
        logs.close()
    assert not [line for line in shown if "ReplicaFetcher" in line and "Error due to" not in line]
    assert "[kafka.server.ReplicaFetcherThread] ERROR Error due to" in shown
    assert not [message for message in reached_root if "ReplicaFetcher" in message]
