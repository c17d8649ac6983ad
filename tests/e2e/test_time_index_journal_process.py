"""A broker process SIGKILLed and started again answers ListOffsets by timestamp (kafka-python's
``offsets_for_times``) as before the kill, as Kafka's does from its ``.timeindex`` files: the time index is in its
log dir's journal. One broker leads a partition alone; three batches (1,000; 2,000 4,000 3,000; 5,000) are
appended at offsets 0, 1 and 4. Before, the restarted broker's index was empty: every lookup answered None."""

from __future__ import annotations

import asyncio
import random
import signal
from pathlib import Path

import pytest
from tests.helpers import wait_until
from tests.wire.test_list_offsets_time_index_codecs import look_up, produce_sets

from zkcontroller.admin.topics import TopicAdmin
from zkcontroller.cluster.process_cluster import wait_registered

from .process_clusters import registered_zk, started_process_cluster
from .test_broker_process_restart_keeps_logs import TOPIC, _end_offset, _led

pytestmark = [pytest.mark.zookeeper, pytest.mark.timeout(240)]

TARGETS = [500, 1_500, 3_500, 4_001, 5_001]


async def test_a_sigkilled_broker_process_finds_offsets_by_timestamp_as_before(tmp_path: Path) -> None:
    with started_process_cluster(tmp_path, [1], session_timeout_ms=6000) as cluster:
        async with registered_zk(cluster) as zk:
            await TopicAdmin(zk, random.Random(1)).create_topic_with_assignment(TOPIC, {0: [1]}, {})
            address = cluster.bootstrap
            await wait_until(lambda: _led(address), 60, "broker 1 to lead kept-0", poll_s=0.2)
            await asyncio.to_thread(produce_sets, address, TOPIC, [[1_000], [2_000, 4_000, 3_000], [5_000]],
                                    acks=1)
            before = await asyncio.to_thread(look_up, address, TOPIC, TARGETS)
            assert before == [(0, 1_000), (1, 2_000), (2, 4_000), (4, 5_000), None]
            cluster.signal(1, signal.SIGKILL)
            cluster.start_broker(1)
            await wait_registered(zk, [1])
            await wait_until(lambda: _led(address), 60, "broker 1 to lead kept-0 again", poll_s=0.2)
            assert await asyncio.to_thread(_end_offset, address) == 5
            assert await asyncio.to_thread(look_up, address, TOPIC, TARGETS) == before  # before: all None
