"""A running in-process cluster's brokers write Kafka 2.8's INFO lines for LeaderAndIsr: state.change.logger's
"Leader/Follower <tp> starts at leader epoch ..." and "Finished LeaderAndIsr request ...", and the fetcher
manager's "Added fetcher to broker ..."."""

from __future__ import annotations

import logging
import random
import re

import pytest
from tests.helpers import wait_until
from tests.integration.conftest import ClusterFactory

from zkcontroller.cluster.cluster_shell import ClusterShell
from zkcontroller.coordination.backend import CoordinationBackend
from zkcontroller.runtime.clock import wall_clock_ms
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

LEADER = re.compile(r"^\[Broker id=(\d)\] Leader orders-(\d) starts at leader epoch 0 from offset 0 with high "
                    r"watermark 0 ISR \[(\d,\d,\d)\] addingReplicas \[\] removingReplicas \[\]\. Previous leader "
                    r"epoch was -1\.$")
FOLLOWER = re.compile(r"^\[Broker id=(\d)\] Follower orders-(\d) starts at leader epoch 0 from offset 0 with high "
                      r"watermark 0\. Previous leader epoch was -1\.$")
FINISHED = re.compile(r"^\[Broker id=(\d)\] Finished LeaderAndIsr request in \d+ms correlationId \d+ from "
                      r"controller (\d) for 2 partitions$")
ADDED = re.compile(r"^\[ReplicaFetcherManager on broker (\d)\] Added fetcher to broker (\d) for partitions "
                   r"Map\(orders-\d -> InitialFetchState\(BrokerEndPoint\(id=\2, host=\S+:\d+\),0,0\)")


async def test_a_new_topics_replicas_log_kafkas_become_leader_and_follower_lines(
        make_cluster: ClusterFactory, backend: CoordinationBackend, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "state.change.logger")
    caplog.set_level(logging.INFO, "kafka.server.ReplicaFetcherManager")
    cluster = await make_cluster([1, 2, 3])
    controller = (await cluster.wait_for_controller()).controller_id
    session = await backend.new_session()
    out: list[str] = []
    shell = ClusterShell(cluster, KafkaZkClient(session, wall_clock_ms), out=out.append, rng=random.Random(1))
    try:
        assert await shell.run_command("create orders 2 3")
    finally:
        await session.close()

    def matching(rx: re.Pattern[str]) -> list[re.Match[str]]:
        return [m for r in list(caplog.records) if (m := rx.match(r.getMessage()))]

    await wait_until(lambda: len(matching(FOLLOWER)) == 4 and len(matching(LEADER)) == 2, what="the lines")
    await wait_until(lambda: len({m[1] for m in matching(FINISHED)}) == 3, what="every broker's Finished line")
    leaders = {int(m[2]): int(m[1]) for m in matching(LEADER)}
    assert sorted(leaders) == [0, 1]
    followers = {(int(m[1]), int(m[2])) for m in matching(FOLLOWER)}
    assert followers == {(b, p) for p in (0, 1) for b in (1, 2, 3) if b != leaders[p]}
    assert all(m[1] in m[3].split(",") and sorted(m[3].split(",")) == ["1", "2", "3"] for m in matching(LEADER))
    assert {m[2] for m in matching(FINISHED)} == {str(controller)}
    added = {(int(m[1]), int(m[2])) for m in matching(ADDED)}
    assert {(b, leaders[p]) for b, p in followers} <= added
    names = {r.name for r in caplog.records if LEADER.match(r.getMessage()) or ADDED.match(r.getMessage())}
    assert names == {"state.change.logger", "kafka.server.ReplicaFetcherManager"}
