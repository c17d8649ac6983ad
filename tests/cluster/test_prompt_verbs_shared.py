"""``create``, ``describe`` and ``delete`` answer alike at both cluster prompts (`cluster.prompt_verbs`): each
prompt had its own copy, and they drifted (the default replication factor, the count checks and their wording)."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from tests.integration.conftest import RecordingTransport, make_local_cluster

from zkcontroller.cluster.cluster_shell import ClusterShell
from zkcontroller.cluster.local_cluster import LocalCluster
from zkcontroller.cluster.partition_wait import wait_for_partitions
from zkcontroller.cluster.process_cluster import ProcessCluster, ProcessClusterShell
from zkcontroller.coordination.embedded_backend import EmbeddedBackend
from zkcontroller.runtime.clock import wall_clock_ms
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

pytestmark = pytest.mark.timeout(120)

USAGE = "usage: create TOPIC [PARTITIONS [RF]]"

Prompt = Callable[[str], Awaitable[list[str]]]
"""Runs one line at a prompt and returns what it printed."""


@pytest.fixture
async def store() -> AsyncIterator[tuple[EmbeddedBackend, KafkaZkClient]]:
    backend = EmbeddedBackend(wall_clock_ms)
    session = await backend.new_session()
    try:
        yield backend, KafkaZkClient(session, wall_clock_ms)
    finally:
        await session.close()
        await backend.close()


@pytest.fixture
async def running(store: tuple[EmbeddedBackend, KafkaZkClient]) -> AsyncIterator[LocalCluster]:
    """Broker 1 running (and registered) on the store; broker 2 is configured at the process prompt, not started."""
    cluster = await make_local_cluster(store[0], [1], RecordingTransport())
    await cluster.wait_for_controller()
    try:
        yield cluster
    finally:
        await cluster.shutdown()


def in_process(cluster: LocalCluster, admin: KafkaZkClient) -> Prompt:
    lines: list[str] = []
    shell = ClusterShell(cluster, admin, out=lines.append, rng=random.Random(1))

    async def run(line: str) -> list[str]:
        lines.clear()
        assert await shell.run_command(line)
        return list(lines)
    return run


def processes(tmp_path: Path, admin: KafkaZkClient) -> Prompt:
    lines: list[str] = []
    shell = ProcessClusterShell(ProcessCluster([1, 2], tmp_path), admin, lines.append)

    async def run(line: str) -> list[str]:
        lines.clear()
        assert await shell.run_command(line)
        return list(lines)
    return run


@pytest.fixture(params=["in-process", "processes"])
def prompt(request: pytest.FixtureRequest, tmp_path: Path, running: LocalCluster,
           store: tuple[EmbeddedBackend, KafkaZkClient]) -> Prompt:
    if request.param == "in-process":
        return in_process(running, store[1])
    return processes(tmp_path, store[1])


@pytest.mark.parametrize(("line", "error"), [
    ("create orders --5", f"PARTITIONS must be a whole number, got '--5'; {USAGE}"),
    ("create orders 5x", f"PARTITIONS must be a whole number, got '5x'; {USAGE}"),
    ("create orders 2 two", f"RF must be a whole number, got 'two'; {USAGE}"),
    ("create orders 2 --1", f"RF must be a whole number, got '--1'; {USAGE}"),
    ("create orders -1", "Number of partitions must be larger than 0."),  # kafka-topics' own, as for --partitions
    ("create orders 1 0", "Replication factor must be larger than 0."),
    ("create orders 1 1 compact", USAGE),
])
async def test_create_refuses_a_count_in_the_same_words_at_both_prompts(prompt: Prompt, line: str, error: str,
                                                                        running: LocalCluster) -> None:
    """``--5`` passed the process prompt's check (``lstrip("-")``) and reached Python's "invalid literal for int()
    with base 10: '--5'"; the prompts also worded a count that is not a number differently."""
    assert await prompt(line) == [f"error: {error}"]
    assert await prompt("describe") == []  # nothing was created


async def test_the_default_replication_factor_is_bounded_by_the_brokers_registered(prompt: Prompt) -> None:
    """One broker of the process prompt's two is up: its default RF of 2 (every configured broker, running or not)
    was refused as "Replication factor: 2 larger than available brokers: 1"; the in-process prompt chose 1."""
    said = await prompt("create orders 2")
    assert said[0] == "Created topic orders."
    assert said[1:3] == ["\tTopic: orders\tPartition: 0\tReplicas: 1", "\tTopic: orders\tPartition: 1\tReplicas: 1"]


async def test_describe_and_delete_answer_alike(prompt: Prompt, store: tuple[EmbeddedBackend, KafkaZkClient]) -> None:
    await prompt("create orders 1 1")  # the process prompt does not wait for the leader
    led = await wait_for_partitions(store[1], lambda _a, state: state.leader_and_isr.leader == 1, 30.0)
    assert led.met
    assert (await prompt("describe orders"))[1:] == ["\tTopic: orders\tPartition: 0\tLeader: 1\tReplicas: 1\tIsr: 1"]
    assert await prompt("describe a b") == ["error: usage: describe [TOPIC]"]
    assert await prompt("delete") == ["error: usage: delete TOPIC"]
    assert await prompt("delete ord.*") == [
        "Topic orders is marked for deletion.",
        "Note: This will have no impact if delete.topic.enable is not set to true."]


async def test_a_killed_broker_still_registered_counts_for_the_default(
    store: tuple[EmbeddedBackend, KafkaZkClient],
) -> None:
    """The in-process prompt bounded the default by its running brokers, the process prompt by its configured ones;
    both now count the brokers registered in ZooKeeper, the ones Kafka's replica placement chooses from (a killed
    broker's session outlives it on the embedded store, so it is still one of them)."""
    cluster = await make_local_cluster(store[0], [1, 2], RecordingTransport())
    try:
        await cluster.wait_for_controller()
        run = in_process(cluster, store[1])
        await run("kill 2")
        assert sorted(await store[1].get_sorted_broker_list()) == [1, 2]
        said = await run("create orders 1")
        assert said[1].startswith("\tTopic: orders\tPartition: 0\tReplicas: ") and len(said[1].split(":")[-1]) == 4
    finally:
        await cluster.shutdown()
