"""The ``cluster`` prompt and the README's demo, driven as a user drives them."""

from __future__ import annotations

import asyncio
import logging
import random
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tests.helpers import sigterm_at_prompt, wait_until
from tests.integration.conftest import ClusterFactory, RecordingTransport, make_local_cluster

from zkcontroller.cli import main
from zkcontroller.cluster.cluster_shell import ClusterShell
from zkcontroller.cluster.process_cluster import ProcessCluster, ProcessClusterShell
from zkcontroller.coordination.backend import CoordinationBackend
from zkcontroller.model import Broker, ReplicaAssignment, TopicPartition
from zkcontroller.protocol.control_requests import AnyControlRequest, ControlResponse, LeaderAndIsrRequest
from zkcontroller.runtime.clock import wall_clock_ms
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

pytestmark = pytest.mark.usefixtures("restored_logging")  # the CLI run in-process sets kazoo's level


async def test_shell_commands(make_cluster: ClusterFactory, backend: CoordinationBackend) -> None:
    cluster = await make_cluster([1, 2, 3])
    first = await cluster.wait_for_controller()
    lines: list[str] = []
    session = await backend.new_session()
    shell = ClusterShell(cluster, KafkaZkClient(session, wall_clock_ms), out=lines.append, rng=random.Random(1))
    try:
        assert await shell.run_command("create orders 4 2")
        assert "4 of 4 partitions have a leader." in lines
        assert await shell.run_command(f"stop {first.controller_id}")
        assert lines[-1].startswith("controller: broker ") and lines[-1].endswith("epoch 2")
        lines.clear()
        assert await shell.run_command("describe orders")
        partition_lines = [line for line in lines if "\tPartition: " in line]
        assert len(partition_lines) == 4
        assert all(f"Leader: {first.controller_id}\t" not in line for line in partition_lines)
        lines.clear()
        assert await shell.run_command("create orders 1 1")  # an error is reported, the shell goes on
        assert lines and lines[-1].startswith("error: ") and "already exists" in lines[-1]
        assert await shell.run_command("stop x")
        assert lines[-1] == "error: usage: stop ID"
        await session.close()  # the prompt's own ZooKeeper session is gone: verbs fail, the prompt stays
        assert await shell.run_command("create payments 2 2")
        assert lines[-1].startswith("error: ZooKeeper ") and "try again" in lines[-1]
        assert await shell.run_command("describe orders")
        assert lines[-1].startswith("error: ZooKeeper ")
        assert await shell.run_command("quit") is False
    finally:
        await session.close()


async def test_both_prompts_print_a_new_topics_replicas_as_kafka_topics_describe_does(
    make_cluster: ClusterFactory, backend: CoordinationBackend, tmp_path: Path
) -> None:
    """The in-process prompt printed `(0:1,2, 1:2,3)` and the processes' prompt `(0:[1, 2], 1:[2, 3])`."""
    cluster = await make_cluster([1, 2, 3])
    await cluster.wait_for_controller()
    session = await backend.new_session()
    admin = KafkaZkClient(session, wall_clock_ms)
    in_process: list[str] = []
    processes: list[str] = []
    shells = [ClusterShell(cluster, admin, out=in_process.append, rng=random.Random(1)),
              ProcessClusterShell(ProcessCluster([1, 2, 3], tmp_path), admin, out=processes.append)]
    try:
        for shell, topic in zip(shells, ("left", "right"), strict=True):
            assert await shell.run_command(f"create {topic} 2 2")
        for lines, topic in ((in_process, "left"), (processes, "right")):
            assert lines[0] == f"Created topic {topic}."
            for partition, line in enumerate(lines[1:3]):
                assert re.fullmatch(rf"\tTopic: {topic}\tPartition: {partition}\tReplicas: [123],[123]", line), line
        assert in_process[3] == "2 of 2 partitions have a leader."
        assert len(processes) == 3
        # `start` there restarts only the cluster's own broker processes; an unknown id ended the prompt (KeyError)
        assert await shells[1].run_command("start 99")
        assert processes[-1] == "error: no broker 99: this prompt restarts only its brokers (1, 2, 3)"
    finally:
        await session.close()


async def test_start_with_a_new_id_adds_a_broker_and_help_says_so(
    make_cluster: ClusterFactory, backend: CoordinationBackend
) -> None:
    cluster = await make_cluster([1, 2])
    await cluster.wait_for_controller()
    session = await backend.new_session()
    lines: list[str] = []
    shell = ClusterShell(cluster, KafkaZkClient(session, wall_clock_ms), out=lines.append)
    try:
        assert await shell.run_command("help")
        assert any("start ID" in line and "a new ID, at most 1000, adds one" in line for line in lines[-1].splitlines())
        assert await shell.run_command("start 99")
        assert "start 99: done" in lines
        assert [s.broker_id for s in cluster.running_brokers()] == [1, 2, 99]
    finally:
        await session.close()


def test_demo_command_runs_on_the_embedded_store(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["demo", "--log-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "won the election with epoch 1" in result.output
    assert "controller: broker" in result.output and "epoch 2" in result.output
    state_change = (tmp_path / "state-change.log").read_text()
    assert "to OnlinePartition with state LeaderAndIsr(leader=" in state_change
    assert (tmp_path / "controller.log").read_text().count("successfully elected as the controller") >= 2
    assert '"type":"controller_elected"' in (tmp_path / "events.jsonl").read_text()


async def test_shell_produce_elect_and_delete(make_cluster: ClusterFactory, backend: CoordinationBackend) -> None:
    cluster = await make_cluster([1, 2, 3])
    await cluster.wait_for_controller()
    lines: list[str] = []
    session = await backend.new_session()
    admin = KafkaZkClient(session, wall_clock_ms)
    shell = ClusterShell(cluster, admin, out=lines.append, rng=random.Random(1))
    try:
        assert await shell.run_command("create logs 2 2")
        assert await shell.run_command("produce logs 10")
        assert lines[-1].startswith("Produced 10 records to logs (log end offsets ")
        assert await shell.run_command("elect logs")
        assert lines[-2:] == ["Created preferred replica election path with logs-0,logs-1",
                              "Successfully started preferred replica election for partitions Set(logs-0, logs-1)"]
        await wait_until(lambda: _no_election_pending(admin), what="the controller to handle the election znode")
        assert await shell.run_command("elect nope")
        assert lines[-1] == "error: topic nope does not exist"
        assert await shell.run_command("delete logs")
        assert lines[-2:] == ["Topic logs is marked for deletion.",
                              "Note: This will have no impact if delete.topic.enable is not set to true."]
        await wait_until(lambda: _gone(admin, "logs"), what="the topic deleted by the controller")
    finally:
        await shell.workload.close()
        await session.close()


class HeldLeaderAndIsrTransport(RecordingTransport):
    """LeaderAndIsr is held back until the test releases it (a loaded host, a slow network): the store shows the
    leaders while no broker leads yet."""

    def __init__(self) -> None:
        super().__init__()
        self.release = asyncio.Event()
        self.held = 0

    async def send(self, broker: Broker, request: AnyControlRequest) -> ControlResponse:
        if isinstance(request, LeaderAndIsrRequest) and not self.release.is_set():
            self.held += 1
            await self.release.wait()
        return await super().send(broker, request)


async def test_create_returns_once_the_brokers_lead_so_produce_finds_them(backend: CoordinationBackend) -> None:
    """``create`` waited for the leaders in the store only: a ``produce`` straight after it found "no running
    broker leads a partition" while the LeaderAndIsr was on its way (the demo's ``create`` then ``produce``)."""
    transport = HeldLeaderAndIsrTransport()
    transport.release.set()  # the brokers' start-up requests go through
    cluster = await make_local_cluster(backend, [1, 2, 3], transport)
    session = await backend.new_session()
    admin = KafkaZkClient(session, wall_clock_ms)
    lines: list[str] = []
    shell = ClusterShell(cluster, admin, out=lines.append, rng=random.Random(1))
    try:
        await cluster.wait_for_controller()
        transport.release.clear()
        create = asyncio.ensure_future(shell.run_command("create logs 4 2"))

        async def leaders_in_store() -> bool:
            states = await admin.get_topic_partition_states([TopicPartition("logs", p) for p in range(4)])
            return len(states.values) == 4 and all(s.leader_and_isr.leader >= 0 for s in states.values.values())

        asked: list[str] = []
        leaders = cluster.leaders

        def counted_leaders(topic: str) -> dict[TopicPartition, Any]:
            asked.append(topic)
            return leaders(topic)

        cluster.leaders = counted_leaders  # type: ignore[method-assign]
        await wait_until(leaders_in_store, what="the leaders of logs in the store")
        await wait_until(lambda: transport.held > 0, what="a LeaderAndIsr held")
        await wait_until(lambda: "logs" in asked, what="create asking the brokers whether they lead")
        assert not create.done() and not leaders("logs")  # create waits for the brokers, not the store
        transport.release.set()
        assert await asyncio.wait_for(create, 30)
        assert lines[-1] == "4 of 4 partitions have a leader."
        assert set(cluster.leaders("logs")) == {TopicPartition("logs", p) for p in range(4)}
        assert await shell.run_command("produce logs 8")
        assert lines[-1].startswith("Produced 8 records to logs (log end offsets ")
    finally:
        await shell.workload.close()
        await session.close()
        await cluster.shutdown()


@pytest.mark.hand_written_isr  # no fetchers: a restarted broker stays out of the ISR, as right after `start`
async def test_elect_says_which_partitions_kept_a_non_preferred_leader_and_why(
    make_cluster: ClusterFactory, backend: CoordinationBackend
) -> None:
    """``elect t`` right after ``start 2`` said "Created preferred replica election for 3 partitions." while t-0's
    preferred replica was not back in the ISR, so nothing moved, and nothing said why."""
    cluster = await make_cluster([1, 2, 3])
    await cluster.wait_for_controller()
    lines: list[str] = []
    session = await backend.new_session()
    admin = KafkaZkClient(session, wall_clock_ms)
    shell = ClusterShell(cluster, admin, out=lines.append, rng=random.Random(1))
    try:
        await admin.create_topic_assignment("t", None, {TopicPartition("t", p): ReplicaAssignment(r)
                                                        for p, r in enumerate([(2, 1), (1, 2), (3, 1)])})
        await wait_until(lambda: _led(admin, "t", 3), what="the topic's partitions to get leaders")
        for command in ("stop 2", "stop 3", "start 2"):
            assert await shell.run_command(command)
        lines.clear()
        assert await shell.run_command("elect t")
        assert lines == [
            "Created preferred replica election path with t-0,t-1,t-2",
            "Successfully started preferred replica election for partitions Set(t-0, t-1, t-2)",
            "t-0 kept leader 1, not its preferred replica 2: it is not in the ISR [1] yet (it joins once caught "
            "up: elect again then)",
            "t-2 kept leader 1, not its preferred replica 3: broker 3 is not running"]
        assert await _no_election_pending(admin)  # the prompt waited for the controller
    finally:
        await session.close()


@pytest.mark.hand_written_isr
async def test_the_processes_prompt_elects_and_deletes_through_zookeeper(
    make_cluster: ClusterFactory, backend: CoordinationBackend, tmp_path: Path
) -> None:
    """`cluster --processes` had no elect or delete (unknown commands), though leader-election's refusal of
    --election-type unclean sent the user to a prompt's elect. Both go through ZooKeeper, so its prompt runs them
    as the in-process one does; the in-process brokers here stand in for the processes (ZooKeeper is all it reads)."""
    cluster = await make_cluster([1, 2, 3])
    await cluster.wait_for_controller()
    lines: list[str] = []
    session = await backend.new_session()
    admin = KafkaZkClient(session, wall_clock_ms)
    shell = ProcessClusterShell(ProcessCluster([1, 2, 3], tmp_path), admin, out=lines.append)
    try:
        await admin.create_topic_assignment("t", None, {TopicPartition("t", p): ReplicaAssignment(r)
                                                        for p, r in enumerate([(2, 1), (3, 1)])})
        await wait_until(lambda: _led(admin, "t", 2), what="the topic's partitions to get leaders")
        await cluster.stop_broker(2)
        await cluster.start_broker(2)  # registered again, out of the ISR (no fetchers here)
        await cluster.stop_broker(3)
        assert await shell.run_command("elect t")
        assert lines == [
            "Created preferred replica election path with t-0,t-1",
            "Successfully started preferred replica election for partitions Set(t-0, t-1)",
            "t-0 kept leader 1, not its preferred replica 2: it is not in the ISR [1] yet (it joins once caught "
            "up: elect again then)",
            "t-1 kept leader 1, not its preferred replica 3: broker 3 is not running"]
        lines.clear()
        assert await shell.run_command("delete t")
        assert lines == ["Topic t is marked for deletion.",
                         "Note: This will have no impact if delete.topic.enable is not set to true."]
    finally:
        await session.close()


async def _led(admin: KafkaZkClient, topic: str, count: int) -> bool:
    states = await admin.get_topic_partition_states([TopicPartition(topic, p) for p in range(count)])
    return len(states.values) == count and all(s.leader_and_isr.leader >= 0 for s in states.values.values())


async def _no_election_pending(admin: KafkaZkClient) -> bool:
    return await admin.get_preferred_replica_election() is None


async def _gone(admin: KafkaZkClient, topic: str) -> bool:
    return topic not in await admin.get_all_topics_in_cluster()


@pytest.mark.hand_written_isr  # no fetchers: the returning replica stays out of the ISR
async def test_shell_unclean_election(make_cluster: ClusterFactory, backend: CoordinationBackend) -> None:
    """`leader-election --election-type unclean` sends users to `elect --unclean` at the prompt: it must exist."""
    cluster = await make_cluster([1, 2, 3])
    first = (await cluster.wait_for_controller()).controller_id
    other = next(b for b in (1, 2, 3) if b != first)
    session = await backend.new_session()
    admin = KafkaZkClient(session, wall_clock_ms)
    lines: list[str] = []
    shell = ClusterShell(cluster, admin, out=lines.append, rng=random.Random(1))
    tp = TopicPartition("ledger", 0)
    try:
        await admin.create_topic_assignment("ledger", None, {tp: ReplicaAssignment((first, other))})
        await wait_until(lambda: _leader(admin, tp, lambda leader: leader >= 0), what="ledger-0 online")
        await cluster.stop_broker(other)  # the ISR shrinks to `first`; `other` comes back outside it
        await cluster.start_broker(other)
        await cluster.stop_broker(first)
        await cluster.wait_for_controller(exclude=first)
        await wait_until(lambda: _leader(admin, tp, lambda leader: leader == -1), what="ledger-0 offline")
        assert await shell.run_command("elect --unclean ledger")
        assert lines[-1] == "Successfully completed leader election (UNCLEAN) for partitions ledger-0"
        assert await _leader(admin, tp, lambda leader: leader == other)
        assert await shell.run_command("elect --unclean")
        assert lines[-1] == "Valid replica already elected for partitions ledger-0"
        assert await shell.run_command("elect --unclean a b")
        assert lines[-1] == "error: usage: elect [--unclean] [TOPIC]"
    finally:
        await session.close()


async def _leader(admin: KafkaZkClient, tp: TopicPartition, check: Callable[[int], bool]) -> bool:
    state = await admin.get_topic_partition_state(tp)
    return state is not None and check(state.leader_and_isr.leader)


@pytest.mark.usefixtures("unreachable_zookeeper_gives_up_soon")
def test_demo_and_cluster_on_an_unreachable_or_malformed_zookeeper_fail_in_one_line() -> None:
    """They used to end in kazoo's ConnectionLossError traceback (or make_backend's ValueError)."""
    from zkcontroller.cluster.zookeeper_server import free_port

    target = f"127.0.0.1:{free_port()}"  # nothing listens there
    loggers = [logging.getLogger(name) for name in ("state.change.logger", "kafka.controller")]
    before = [(logger.level, list(logger.handlers)) for logger in loggers]
    for argv in (["demo", "--zookeeper", target], ["cluster", "--zookeeper", target]):
        result = CliRunner().invoke(main, argv, input="")
        assert result.exit_code == 1, (argv, result.output)
        assert result.output.strip().splitlines()[-1] == f"Error: cannot connect to ZooKeeper at {target}"
        assert "Traceback" not in result.output
        # the run's log files are closed on this path too: their levels and handlers were left on these
        # process-wide loggers, and later tests in the same process saw TRACE lines they did not expect
        assert [(logger.level, list(logger.handlers)) for logger in loggers] == before, argv
    for argv in (["demo", "--zookeeper", "garbage:x"], ["cluster", "--processes", "1", "--zookeeper", "garbage:x"]):
        result = CliRunner().invoke(main, argv, input="")  # a port ZooKeeper's own parser refuses
        assert result.exit_code == 1, (argv, result.output)
        assert "bad ZooKeeper connect string 'garbage:x': For input string: \"x\"" in result.output


def test_prompt_shows_each_log_line_once_and_a_controller_error_in_one_line(reached_root: list[str]) -> None:
    """At the prompt every broker warning used to appear twice (the prompt's line on stdout and the root
    handler's on stderr, one terminal) and `expire <controller>` printed a 25-line stack trace."""
    from zkcontroller.cluster.cluster_shell import PromptLogHandler
    from zkcontroller.coordination.errors import SessionExpiredError

    shown: list[str] = []
    with PromptLogHandler(shown.append).attached():
        logging.getLogger("kafka.server.KafkaServer").warning("Retrying controlled shutdown")
        try:
            raise SessionExpiredError()
        except SessionExpiredError as e:
            logging.getLogger("kafka.controller.KafkaController").error("Error processing event BrokerChange",
                                                                         exc_info=e)
    assert shown == [
        "[kafka.server.KafkaServer] WARN Retrying controlled shutdown",
        "[kafka.controller.KafkaController] ERROR Error processing event BrokerChange: SessionExpiredError: "
        "SESSION_EXPIRED (stack trace in controller.log)"]
    assert reached_root == []
    assert logging.getLogger("kafka.server").propagate  # restored on detach


def test_sigterm_at_an_idle_prompt_stops_the_cluster() -> None:
    """`kill <pid>` while the prompt waits for a line, standard input still open, used to hang forever: first
    the handler raised KeyboardInterrupt out of the event loop, so asyncio.run cancelled every broker task at
    once and the brokers' shutdown waited on tasks already cancelled; then asyncio.run waited for the thread
    blocked reading standard input (`cluster.prompt_input`)."""
    returncode, out = sigterm_at_prompt([sys.executable, "-m", "zkcontroller.cli", "cluster", "--brokers", "2"])
    assert returncode == 0, out
    assert out.rstrip().endswith("stopped"), out
