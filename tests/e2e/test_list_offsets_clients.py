"""ListOffsets against ``zkcontroller cluster --zookeeper ... --port-base 0`` as a user runs it: after the prompt's
``produce``, kafka-python's ``end_offsets()`` is each partition's high watermark and ``beginning_offsets()`` 0,
``offsets_for_times()`` finds nothing (no record timestamps are kept), and ``kcat -Q`` prints the same offsets.
Then kafka-python's admin client deletes a topic. Every wait is on a condition with a bound."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator

import pytest
from tests.e2e.cluster_prompt import assert_records_are_not_kept, running_cluster
from tests.e2e.test_cluster_command_listeners import Prompt, kcat, wait_for
from tests.helpers import tool_missing

from zkcontroller.cluster.zookeeper_server import ZooKeeperServerProcess

pytestmark = [pytest.mark.zookeeper, pytest.mark.timeout(240)]

KCAT = shutil.which("kcat")
TOPIC = "counted"


@pytest.fixture(scope="module")
def cluster(zookeeper_server: ZooKeeperServerProcess, tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[tuple[Prompt, str]]:
    """Three in-process brokers with ``counted`` (2 partitions, replication factor 2) and 10 records produced:
    the prompt and a bootstrap address."""
    with running_cluster(zookeeper_server, tmp_path_factory, "offsets") as (prompt, address):
        prompt.send(f"create {TOPIC} 2 2")
        prompt.expect(r"^2 of 2 partitions have a leader\.", 60)
        prompt.send(f"produce {TOPIC} 10")
        prompt.expect(rf"^Produced 10 records to {TOPIC} \(log end offsets 0:5, 1:5\)\.", 60)
        yield prompt, address


def offsets(address: str) -> tuple[dict[int, int], dict[int, int], dict[int, object]]:
    """kafka-python's end offsets, beginning offsets and offsets for a timestamp, by partition."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=address, request_timeout_ms=20000)
    try:
        tps = [TopicPartition(TOPIC, p) for p in (0, 1)]
        end = consumer.end_offsets(tps)
        begin = consumer.beginning_offsets(tps)
        by_time = consumer.offsets_for_times({tp: 1_600_000_000_000 for tp in tps})
        return ({tp.partition: o for tp, o in end.items()}, {tp.partition: o for tp, o in begin.items()},
                {tp.partition: o for tp, o in by_time.items()})
    finally:
        consumer.close()


def test_kafka_python_reads_end_and_beginning_offsets(cluster: tuple[Prompt, str]) -> None:
    _, address = cluster
    # the HW follows the LEO once the followers have fetched: wait for it, bounded
    found = wait_for(lambda: (o := offsets(address))[0] == {0: 5, 1: 5} and o, "end offsets 5 and 5")
    assert isinstance(found, tuple)
    end, begin, by_time = found
    assert end == {0: 5, 1: 5}
    assert begin == {0: 0, 1: 0}
    assert by_time == {0: None, 1: None}  # no batch timestamp known (offset -1): kafka-python answers None


def kcat_query(address: str, partition: int, offset: int) -> str:
    assert KCAT is not None
    done = subprocess.run([KCAT, "-b", address, "-Q", "-t", f"{TOPIC}:{partition}:{offset}"], capture_output=True,
                          text=True, timeout=30)
    return done.stdout + done.stderr


def test_kcat_queries_latest_and_earliest_offsets(cluster: tuple[Prompt, str]) -> None:
    if KCAT is None:
        tool_missing("kcat", "not on PATH (queries offsets through librdkafka)")
    _, address = cluster
    assert kcat(address) is not None
    for partition in (0, 1):
        latest = wait_for(lambda p=partition: re.search(rf"{TOPIC} \[{p}\] offset 5\b",  # type: ignore[misc]
                                                        kcat_query(address, p, -1)), f"kcat: {TOPIC} [{partition}] 5")
        assert latest
        assert re.search(rf"{TOPIC} \[{partition}\] offset 0\b", kcat_query(address, partition, -2))


def test_confluent_kafka_reads_watermarks_and_lists_offsets(cluster: tuple[Prompt, str]) -> None:
    """librdkafka: ``get_watermark_offsets`` (ListOffsets for -2 and -1 from the leader) and the admin client's
    ``list_offsets``; a timestamp lookup no batch reaches gets offset -1 (the shell's appends carry no
    timestamps), as Kafka answers it."""
    from confluent_kafka import Consumer, TopicPartition
    from confluent_kafka.admin import AdminClient, OffsetSpec

    _, address = cluster
    consumer = Consumer({"bootstrap.servers": address, "group.id": "offsets-test"})
    try:
        marks = wait_for(lambda: (w := consumer.get_watermark_offsets(TopicPartition(TOPIC, 1), timeout=20))
                         == (0, 5) and w, "watermarks (0, 5)")
        assert marks == (0, 5)
    finally:
        consumer.close()
    admin = AdminClient({"bootstrap.servers": address})
    latest = admin.list_offsets({TopicPartition(TOPIC, 0): OffsetSpec.latest()}, request_timeout=20)
    assert latest[TopicPartition(TOPIC, 0)].result(timeout=30).offset == 5
    earliest = admin.list_offsets({TopicPartition(TOPIC, 0): OffsetSpec.earliest()}, request_timeout=20)
    assert earliest[TopicPartition(TOPIC, 0)].result(timeout=30).offset == 0
    by_time = admin.list_offsets({TopicPartition(TOPIC, 0): OffsetSpec.for_timestamp(1_600_000_000_000)},
                                 request_timeout=20)
    assert by_time[TopicPartition(TOPIC, 0)].result(timeout=30).offset == -1


def test_a_kafka_python_consumer_is_told_records_are_not_kept(cluster: tuple[Prompt, str]) -> None:
    """A consumer's fetch is refused with UNSUPPORTED_FOR_MESSAGE_FORMAT, which kafka-python's poll raises; it
    used to return nothing, as if no records had been produced."""
    _, address = cluster
    assert_records_are_not_kept(address, TOPIC)


def test_kafka_pythons_admin_client_deletes_a_topic(cluster: tuple[Prompt, str]) -> None:
    """A topic of its own, with records produced, goes: deleting the module's topic made every other test fail
    when it ran first (alone they pass in any order)."""
    from kafka.admin import KafkaAdminClient

    prompt, address = cluster
    prompt.send("create doomed 2 2")
    prompt.expect(r"^2 of 2 partitions have a leader\.", 60)
    prompt.send("produce doomed 4")
    prompt.expect(r"^Produced 4 records to doomed ", 60)
    client = KafkaAdminClient(bootstrap_servers=address, request_timeout_ms=30000)
    try:
        client.delete_topics(["doomed"], timeout_ms=30000)
        assert "doomed" not in client.list_topics()
        assert TOPIC in client.list_topics()
    finally:
        client.close()
