"""``zkcontroller cluster --brokers 3 --zookeeper <chroot> --port-base 0`` at its prompt, shared by the end-to-end
client tests: started, waited for until the prompt is ready, and quit (killed if it does not) at the end."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from tests.e2e.test_cluster_command_listeners import CLI, Prompt, wait_for

from zkcontroller.cluster.zookeeper_server import ZooKeeperServerProcess


def _alive_brokers(address: str) -> int:
    """How many brokers the broker at ``address`` lists in its Metadata answer (0 if it does not answer)."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    try:
        return len(AdminClient({"bootstrap.servers": address}).list_topics(timeout=10).brokers)
    except KafkaException:  # not answering yet: polled again within the bound
        return 0


@contextmanager
def running_cluster(zookeeper_server: ZooKeeperServerProcess, tmp_path_factory: pytest.TempPathFactory,
                    name: str, chroot: str | None = None) -> Iterator[tuple[Prompt, str]]:
    """Three in-process brokers under ``chroot`` (default a fresh ``/<name>-...``) with their logs in a ``<name>``
    temporary directory, once the prompt is ready: the prompt and broker 1's address (a bootstrap address)."""
    connect = zookeeper_server.connect_string + (chroot or f"/{name}-{os.getpid()}-{time.monotonic_ns()}")
    logs = tmp_path_factory.mktemp(name) / "logs"
    prompt = Prompt([*CLI, "cluster", "--brokers", "3", "--zookeeper", connect, "--port-base", "0",
                     "--session-timeout-ms", "6000", "--log-dir", str(logs)])
    try:
        prompt.expect(r"^cluster up: brokers 1, 2, 3")
        addresses = [prompt.expect(rf"^broker {i} listens on (127\.0\.0\.1:\d+)$")[1] for i in (1, 2, 3)]
        prompt.expect(r"^  help \| quit")
        # every broker's metadata lists all three before a test asks: a CreateTopics placed over the controller's
        # cache refused replication factor 3 ("available brokers: 2") while the last UpdateMetadata was on its way
        wait_for(lambda: all(_alive_brokers(a) == 3 for a in addresses), "every broker's metadata to list 3 brokers")
        yield prompt, addresses[0]
    finally:
        if prompt.proc.poll() is None:
            prompt.send("quit")
            try:
                prompt.proc.wait(60)
            except subprocess.TimeoutExpired:
                prompt.proc.kill()
        prompt.proc.wait(30)


def assert_records_are_not_kept(address: str, topic: str) -> None:
    """A kafka-python consumer of ``topic``'s partition 0 from the beginning is refused with
    UNSUPPORTED_FOR_MESSAGE_FORMAT, which its poll raises (within 60 s), having polled nothing before.

    The caller must have produced to partition 0: its high watermark is waited for above 0 first (bounded, a
    follower may still be fetching). At the high watermark, an empty partition's offset 0 included, a Fetch gets
    no records and no error, as Kafka 2.8's ``Log.read`` answers it, so with nothing produced the consumer would
    poll nothing forever and this check could not tell a refusal from an empty success."""
    from kafka import KafkaConsumer, TopicPartition
    from kafka.errors import UnsupportedForMessageFormatError

    tp = TopicPartition(topic, 0)
    consumer = KafkaConsumer(bootstrap_servers=address, request_timeout_ms=20000)
    try:
        wait_for(lambda: consumer.end_offsets([tp])[tp] > 0,
                 f"{topic}'s partition 0 to have records below its high watermark (produce to it first)")
        consumer.assign([tp])
        consumer.seek_to_beginning()
        deadline = time.monotonic() + 60
        with pytest.raises(UnsupportedForMessageFormatError):
            while time.monotonic() < deadline:
                polled = consumer.poll(timeout_ms=1000)
                assert polled == {}, f"records served, but none are kept: {polled}"
    finally:
        consumer.close()
