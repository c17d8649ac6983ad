"""What a new user typing at ``zkcontroller cluster`` ran into: each test is one of the answers that was wrong,
misleading or slow."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from tests.helpers import OffsetClock, wait_until
from tests.integration.conftest import RecordingTransport, make_local_cluster

from zkcontroller.broker.config import ReplicationConfig, virtual_log_dirs
from zkcontroller.cluster.cluster_shell import ClusterShell
from zkcontroller.cluster.process_cluster import ProcessCluster, ProcessClusterShell
from zkcontroller.coordination.embedded_backend import EmbeddedBackend
from zkcontroller.runtime.clock import wall_clock_ms
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

pytestmark = pytest.mark.timeout(120)

ShellFactory = Callable[[list[int]], Awaitable[tuple[ClusterShell, list[str]]]]
NOTE = "Note: This will have no impact if delete.topic.enable is not set to true."


@pytest.fixture
def clock() -> OffsetClock:
    """The store's clock: a test passes a session timeout at once with ``advance``."""
    return OffsetClock(wall_clock_ms)


@pytest.fixture
async def shell_on(clock: OffsetClock) -> AsyncIterator[ShellFactory]:
    """A prompt over brokers on the embedded store; its printed lines are returned with it."""
    backend = EmbeddedBackend(clock)
    session = await backend.new_session()
    clusters = []

    async def make(broker_ids: list[int]) -> tuple[ClusterShell, list[str]]:
        cluster = await make_local_cluster(backend, broker_ids, RecordingTransport())
        clusters.append(cluster)
        await cluster.wait_for_controller()
        lines: list[str] = []
        return ClusterShell(cluster, KafkaZkClient(session, wall_clock_ms), out=lines.append,
                            rng=random.Random(1)), lines

    try:
        yield make
    finally:
        for cluster in clusters:
            await cluster.shutdown()
        await session.close()
        await backend.close()


async def test_create_names_the_argument_that_is_not_a_number(shell_on: ShellFactory) -> None:
    shell, lines = await shell_on([1, 2])
    usage = "usage: create TOPIC [PARTITIONS [RF]]"  # help's words, as every usage error
    await shell.run_command("create orders x")  # was: invalid literal for int() with base 10: 'x'
    assert lines[-1] == f"error: PARTITIONS must be a whole number, got 'x'; {usage}"
    await shell.run_command("create orders 2 two")
    assert lines[-1] == f"error: RF must be a whole number, got 'two'; {usage}"
    await shell.run_command("create orders 2 2 compact")  # the extra word was ignored
    assert lines[-1] == f"error: {usage}"
    await shell.run_command("create orders -1")  # a number, refused as kafka-topics refuses it
    assert lines[-1] == "error: Number of partitions must be larger than 0."
    assert not await shell.admin.get_all_topics_in_cluster()


async def test_describe_of_two_topics_is_a_usage_error_not_the_first_alone(shell_on: ShellFactory) -> None:
    shell, lines = await shell_on([1])
    await shell.run_command("create a 1 1")
    await shell.run_command("create b 1 1")
    lines.clear()
    await shell.run_command("describe a b")
    assert lines == ["error: usage: describe [TOPIC]"]


async def test_stopping_the_last_broker_does_not_wait_for_a_controller_none_can_become(
    shell_on: ShellFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    shell, lines = await shell_on([1])

    async def no_wait(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("waited for a controller with no broker running (30 s, then an error)")

    monkeypatch.setattr(shell.cluster, "wait_for_controller", no_wait)
    await shell.run_command("stop 1")
    assert lines[-2:] == ["stop 1: done", "no broker is running: there is no controller until one starts"]


async def test_create_with_every_broker_stopped_says_there_are_no_brokers(shell_on: ShellFactory) -> None:
    shell, lines = await shell_on([1])
    await shell.cluster.stop_broker(1)
    await shell.run_command("create orders")  # the default replication factor was 0
    assert lines[-1] == "error: Replication factor: 1 larger than available brokers: 0."


async def test_stop_says_a_controlled_shutdown_is_under_way_before_its_retries(shell_on: ShellFactory) -> None:
    """Kafka's retries stay (5 s apart by default): the prompt says what it is waiting for first."""
    shell, lines = await shell_on([1, 2])
    await shell.run_command("stop 2")
    assert lines[0] == ("stop 2: controlled shutdown, handing its leadership to other brokers "
                        "(up to 3 attempts, 20 ms apart, while some cannot move)")
    assert lines[1] == "stop 2: done"


async def test_create_without_a_controller_says_so_instead_of_waiting_for_leaders(
    shell_on: ShellFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The controller's broker was killed; its session holds /controller until it expires, so nothing gives
    the new partitions leaders meanwhile. `create` waited 30 s in silence, then said "0 of 2 ... leader"."""
    shell, lines = await shell_on([1, 2])
    controller = (await shell.cluster.wait_for_controller()).controller_id
    await shell.cluster.crash_broker(controller)

    async def no_wait(*_args: object, **_kwargs: object) -> int:
        raise AssertionError("waited for leaders no controller will elect")

    monkeypatch.setattr(shell, "_wait_online", no_wait)
    await shell.run_command("create orders 2 1")
    assert lines[0] == "Created topic orders."
    assert lines[-1] == ("no controller right now (`status` shows when one is elected): it gives the partitions "
                         "leaders then")


async def test_a_broker_command_says_it_waits_for_a_killed_controllers_session(
    shell_on: ShellFactory, clock: OffsetClock
) -> None:
    """After `kill <controller>`, `stop`, `start` and `expire` wait for the next controller, which needs the
    killed broker's session to expire first (18 s by default): the prompt sat silent meanwhile."""
    shell, lines = await shell_on([1, 2, 3])
    killed = (await shell.cluster.wait_for_controller()).controller_id
    await shell.run_command(f"kill {killed}")
    stopped = max(b for b in (1, 2, 3) if b != killed)
    command = asyncio.create_task(shell.run_command(f"stop {stopped}"))
    waiting = (f"broker {killed}, killed, holds /controller until its session expires (up to 6 s); waiting for "
               "the next controller")
    await wait_until(lambda: waiting in lines or command.done(), what="the stop to say what it waits for")
    assert waiting in lines
    clock.advance(6000)  # the killed broker's session expires; the last broker is elected
    await asyncio.wait_for(command, 30)
    last = next(b for b in (1, 2, 3) if b not in (killed, stopped))
    assert lines[-1] == f"controller: broker {last}, epoch 2"


async def test_an_unknown_verb_is_one_line_naming_the_verbs(shell_on: ShellFactory) -> None:
    """It printed "unknown command 'foo'" and then the 15 lines of help, burying the mistake typed."""
    shell, lines = await shell_on([1])
    assert await shell.run_command("describ orders")
    assert lines == ["error: unknown command 'describ'; commands: status, create, describe, stop, start, kill, expire, "
                     "fail-log-dir, produce, elect, delete, help, quit (`help` says what each does)"]


@pytest.mark.parametrize("verb", ["stop", "kill", "expire"])
async def test_a_broker_the_cluster_does_not_have_is_named_as_such(shell_on: ShellFactory, verb: str) -> None:
    """``stop 9`` said "broker 9 is not running", as if 9 were one of the cluster's brokers, stopped."""
    shell, lines = await shell_on([1, 2])
    assert await shell.run_command(f"{verb} 9")
    assert lines == ["error: broker 9 is not running: this cluster has brokers 1, 2 (`start 9` adds one)"]


@pytest.mark.parametrize("line", ["produce nosuch 10", "produce nosuch --rate 10"])
async def test_producing_to_a_topic_that_does_not_exist_is_refused(shell_on: ShellFactory, line: str) -> None:
    """``--rate`` said "producing 10 records/s to nosuch" and started a producer that failed every tick unseen;
    a count said "no running broker leads a partition of topic 'nosuch'"."""
    shell, lines = await shell_on([1])
    assert await shell.run_command(line)
    assert lines == ["error: topic nosuch does not exist (create it first: create nosuch)"]
    assert not shell.workload.tasks


async def test_a_count_to_produce_must_be_positive(shell_on: ShellFactory) -> None:
    """``produce orders -5`` said "RECORDS must be a whole number, got '-5'", which -5 is; ``produce orders 0``
    printed "Produced 0 records" for a command that did nothing."""
    shell, lines = await shell_on([1])
    await shell.run_command("create orders 1 1")
    del lines[:]
    for line in ("produce orders -5", "produce orders 0", "produce orders --rate 0", "produce orders --rate -2"):
        assert await shell.run_command(line)
    usage = "usage: produce TOPIC RECORDS | produce TOPIC --rate RATE | produce --stop [TOPIC]"
    assert lines == [f"error: RECORDS must be a positive whole number (1 or more), got '-5'; {usage}",
                     f"error: RECORDS must be a positive whole number (1 or more), got '0'; {usage}",
                     f"error: RATE must be a positive whole number (1 or more), got '0'; {usage}",
                     f"error: RATE must be a positive whole number (1 or more), got '-2'; {usage}"]
    assert not shell.workload.tasks
    assert await shell.run_command("produce orders 1")
    assert lines[-1] == "Produced 1 records to orders (log end offsets 0:1)."


async def test_a_verb_that_takes_no_arguments_refuses_extra_words(shell_on: ShellFactory) -> None:
    """``status extra`` printed the status and dropped the word without a sign; ``quit now`` quit."""
    shell, lines = await shell_on([1])
    for line in ("status extra", "help me", "quit now", "exit now"):
        assert await shell.run_command(line), line
    assert lines == ["error: status takes no arguments, got 'extra'; usage: status",
                     "error: help takes no arguments, got 'me'; usage: help",
                     "error: quit takes no arguments, got 'now'; usage: quit",
                     "error: quit takes no arguments, got 'now'; usage: quit"]
    assert not await shell.run_command("quit")


@pytest.mark.parametrize("verb", ["start", "stop"])
async def test_a_broker_id_past_kafkas_reserved_maximum_is_refused(shell_on: ShellFactory, verb: str) -> None:
    """``start 99999`` started a broker that registered a port past 65535 and never joined; ``--broker-ids``
    already refused ids above 1000 (Kafka's reserved.broker.max.id)."""
    shell, lines = await shell_on([1])
    assert await shell.run_command(f"{verb} 99999")
    assert lines == [f"error: ID must be at most 1000 (Kafka's reserved.broker.max.id, as for --broker-ids), "
                     f"got 99999; usage: {verb} ID"]
    assert sorted(shell.cluster.brokers) == [1]


async def test_failing_a_log_dir_again_says_it_has_already_failed(clock: OffsetClock) -> None:
    """The second ``fail-log-dir`` of one dir said "log dir ... failed; replicas offline: none", as if a second
    disk had failed with nothing on it."""
    backend = EmbeddedBackend(clock)
    session = await backend.new_session()
    cluster = await make_local_cluster(backend, [1, 2], RecordingTransport(),
                                       replication=ReplicationConfig(log_dirs=virtual_log_dirs(2)))
    try:
        lines: list[str] = []
        shell = ClusterShell(cluster, KafkaZkClient(session, wall_clock_ms), out=lines.append, rng=random.Random(1))
        assert await shell.run_command("fail-log-dir 1 /tmp/kafka-logs-0")
        assert lines[0].startswith("log dir /tmp/kafka-logs-0 of broker 1 failed"), lines
        lines.clear()
        assert await shell.run_command("fail-log-dir 1 /tmp/kafka-logs-0")
        assert lines == ["error: log dir /tmp/kafka-logs-0 of broker 1 has already failed (`describe` shows its "
                         "offline replicas)"]
    finally:
        await cluster.shutdown()
        await session.close()
        await backend.close()


async def test_delete_takes_a_regex_as_describe_and_kafka_topics_do(shell_on: ShellFactory) -> None:
    """``describe o.*`` listed orders and other, and ``delete o.*`` said "Topic `o.*` to delete does not exist":
    the prompt's delete took NAME literally, where ``topics delete`` and kafka-topics' --delete --topic match."""
    shell, lines = await shell_on([1])
    for topic in ("orders", "other", "logs"):
        await shell.run_command(f"create {topic} 1 1")
    lines.clear()
    await shell.run_command("delete o.*")
    assert lines == ["Topic orders is marked for deletion.", NOTE, "Topic other is marked for deletion.", NOTE]
    lines.clear()
    await shell.run_command("delete nope.*")  # none matches: kafka-topics' error
    assert lines == ["error: Topic 'nope.*' does not exist as expected"]
    assert "logs" in await shell.admin.get_all_topics_in_cluster()


COLLISION_WARNING = ("WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') "
                     "could collide. To avoid issues it is best to use either, but not both.")
"""TopicCommand's, as kafka-topics --create prints it (written out: the test checks the shared text too)."""


async def test_create_warns_of_a_period_or_underscore_as_kafka_topics_does(
        shell_on: ShellFactory, tmp_path: Path) -> None:
    """``create a.b`` at either prompt left out the warning ``topics create`` prints, before the creation."""
    shell, lines = await shell_on([1])
    processes: list[str] = []
    process_shell = ProcessClusterShell(ProcessCluster([1], tmp_path), shell.admin, out=processes.append)
    await shell.run_command("create a.b 1 1")
    assert lines[:2] == [COLLISION_WARNING, "Created topic a.b."]
    await process_shell.run_command("create c_d 1 1")
    assert processes[:2] == [COLLISION_WARNING, "Created topic c_d."]
    lines.clear()
    await shell.run_command("create a_b 1 1")  # refused (it collides with a.b), warned first as Kafka does
    assert lines[0] == COLLISION_WARNING and lines[1].startswith("error: ") and len(lines) == 2, lines
    lines.clear()
    await shell.run_command("create plain 1 1")
    assert lines[0] == "Created topic plain."


async def test_produce_stop_says_how_many_records_were_produced_and_how_many_failed(shell_on: ShellFactory) -> None:
    """``produce --stop t`` said only "stopped producing to t"; a producer whose appends failed meanwhile (no
    running broker led the topic) looked the same as one that produced every record."""
    shell, lines = await shell_on([1])
    await shell.run_command("create ok 1 1")
    await shell.run_command("create t 1 1")
    workload = shell.workload
    await shell.run_command("produce ok --rate 200")
    await wait_until(lambda: workload.produced.get("ok", 0) >= 20, what="records produced to ok")
    await shell.run_command("produce --stop ok")
    assert lines[-1] == f"stopped producing to ok: {workload.produced['ok']} records produced, 0 failed"

    await shell.run_command("produce t --rate 200")
    await wait_until(lambda: workload.produced.get("t", 0) >= 20, what="records produced to t")
    await shell.run_command("stop 1")  # no broker leads t any more: every append fails
    await wait_until(lambda: workload.failed.get("t", 0) >= 20, what="failed appends to t")
    lines.clear()
    await shell.run_command("produce --stop")
    produced, failed = workload.produced["t"], workload.failed["t"]
    assert produced >= 20 and failed >= 20
    assert lines == [f"stopped producing to t: {produced} records produced, {failed} failed (the last: no running "
                     "broker leads a partition of topic 't')"]


async def test_delete_prints_kafka_topics_note_for_each_topic_it_marks(shell_on: ShellFactory) -> None:
    """kafka-topics.sh --delete (TopicCommand's ``ZookeeperTopicService.deleteTopic``, 2.8) prints the note on
    delete.topic.enable after each topic it marks, and not for one already marked; the prompt left it out. With
    broker 2 down the controller cannot finish the deletion, so the marker stays for the second ``delete``."""
    shell, lines = await shell_on([1, 2])
    await shell.run_command("create orders 1 2")
    await shell.run_command("kill 2")
    lines.clear()
    await shell.run_command("delete orders")
    assert lines == ["Topic orders is marked for deletion.", NOTE]
    lines.clear()
    await shell.run_command("delete orders")
    assert lines == ["Topic orders is already marked for deletion."]
