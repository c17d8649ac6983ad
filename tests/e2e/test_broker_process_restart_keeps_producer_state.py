"""A broker process SIGKILLed and started again keeps its idempotent producers' state, as Kafka's does (producer
snapshots and log recovery): the batch headers are in its log dir's journal. One broker leads a partition alone;
an idempotent batch (producer id 4242, sequence 0, 3 records) is appended at offset 0; after the restart the same
batch sent again (the producer's retry of a lost answer) is answered with its original offset 0 and not appended,
and a batch with a sequence gap is OUT_OF_ORDER_SEQUENCE_NUMBER. Before, the restarted broker had no entry: the
retry was appended again at offset 3."""

from __future__ import annotations

import asyncio
import random
import signal
import socket
from pathlib import Path

import pytest
from kafka.record.memory_records import MemoryRecordsBuilder
from tests.helpers import wait_until
from tests.wire.server_fixture import read_frame, request_frame

from zkcontroller.admin.topics import TopicAdmin
from zkcontroller.cluster.process_cluster import wait_registered
from zkcontroller.protocol.wire import codec
from zkcontroller.protocol.wire.client_apis import PRODUCE, PRODUCE_REQUEST, PRODUCE_RESPONSE
from zkcontroller.protocol.wire.frames import decode_response_header

from .process_clusters import registered_zk, started_process_cluster
from .test_broker_process_restart_keeps_logs import TOPIC, _end_offset, _led

pytestmark = [pytest.mark.zookeeper, pytest.mark.timeout(240)]

PRODUCER_ID = 4242
NONE, OUT_OF_ORDER_SEQUENCE_NUMBER = 0, 45
VERSION = 3


def _batch(count: int, sequence: int) -> bytes:
    builder = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 20, producer_id=PRODUCER_ID,
                                   producer_epoch=0, base_sequence=sequence)
    for i in range(count):
        builder.append(timestamp=None, key=None, value=b"p%d" % i)
    builder.close()
    return bytes(builder.buffer())


def _produce(address: str, records: bytes) -> tuple[int, int]:
    """One Produce v3 (acks=1) of ``records`` to partition 0 on a raw connection: (error, base offset)."""
    host, port = address.split(",")[0].rsplit(":", 1)
    body = codec.encode(PRODUCE_REQUEST, VERSION, {"transactional_id": None, "acks": 1, "timeout_ms": 30_000,
                                                   "topics": [{"name": TOPIC, "partitions": [
                                                       {"index": 0, "records": records}]}]})
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(request_frame(PRODUCE, VERSION, 7, body))
        payload = read_frame(sock)
    assert payload is not None
    _, offset = decode_response_header(payload, PRODUCE, VERSION)
    value = codec.decode(PRODUCE_RESPONSE, VERSION, payload, offset)
    [partition] = value["responses"][0]["partitions"]
    return partition["error_code"], partition["base_offset"]


async def test_a_sigkilled_broker_process_restarts_with_its_producer_state(tmp_path: Path) -> None:
    with started_process_cluster(tmp_path, [1], session_timeout_ms=6000) as cluster:
        async with registered_zk(cluster) as zk:
            await TopicAdmin(zk, random.Random(1)).create_topic_with_assignment(TOPIC, {0: [1]}, {})
            address = cluster.bootstrap
            await wait_until(lambda: _led(address), 60, "broker 1 to lead kept-0", poll_s=0.2)
            first = _batch(3, 0)
            assert await asyncio.to_thread(_produce, address, first) == (NONE, 0)
            cluster.signal(1, signal.SIGKILL)
            cluster.start_broker(1)
            await wait_registered(zk, [1])
            await wait_until(lambda: _led(address), 60, "broker 1 to lead kept-0 again", poll_s=0.2)
            assert await asyncio.to_thread(_produce, address, first) == (NONE, 0)  # before: (NONE, 3)
            assert await asyncio.to_thread(_end_offset, address) == 3
            assert await asyncio.to_thread(_produce, address, _batch(1, 5)) == (OUT_OF_ORDER_SEQUENCE_NUMBER, -1)
            assert await asyncio.to_thread(_produce, address, _batch(1, 3)) == (NONE, 3)
