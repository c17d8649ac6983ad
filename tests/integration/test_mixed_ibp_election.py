"""An election that finds no leader in the controller's copy of a partition state asks ZooKeeper before giving up.

In a cluster mid-way through a rolling IBP upgrade, leaders still below 2.7-IV2 write ISR expansions to ZooKeeper
themselves and announce them only later (the ISR-change notification is batched), whatever the controller's own
IBP. Kafka 2.8 reads every state before electing, so it sees the wider ISR; the copy alone would leave the
partition offline with a live in-sync replica.
"""

from __future__ import annotations

from tests.helpers import wait_until
from tests.integration.conftest import RecordingTransport, make_local_cluster
from tests.integration.test_controller_cluster import create_topic, wait_for_states
from tests.integration.test_isr_upkeep import crash

from zkcontroller.broker.config import ReplicationConfig
from zkcontroller.coordination.backend import CoordinationBackend as Backend
from zkcontroller.model import TopicPartition
from zkcontroller.protocol.inter_broker import AlterIsrPartition, AlterIsrRequest
from zkcontroller.zk.fencing import NO_FENCING
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

TP = TopicPartition("t", 0)


async def test_election_reads_an_isr_an_older_leader_widened_unannounced(backend: Backend,
                                                                         admin: KafkaZkClient) -> None:
    cluster = await make_local_cluster(backend, [1, 2, 3], RecordingTransport(), None,
                                       ReplicationConfig(replica_fetching=False), None)
    try:
        controller = await cluster.wait_for_controller()
        leader, follower = [b for b in (1, 2, 3) if b != controller.controller_id]
        await create_topic(admin, "t", {0: [leader, follower]})
        states = await wait_for_states(admin, "t", 1, lambda s: s[0].leader_and_isr.leader == leader, "a leader")
        lai = states[0].leader_and_isr
        epoch = controller.context.live_broker_id_and_epochs[leader]
        shrink = AlterIsrPartition(TP, lai.leader_epoch, (leader,), lai.zk_version)
        answer = await controller.handle_broker_request(AlterIsrRequest(leader, epoch, (shrink,)))
        assert answer.partitions[0].isr == (leader,)  # the controller's copy: ISR [leader]

        # the leader, at an older IBP, widens the ISR in ZooKeeper itself; its notification is not out yet
        now = (await admin.get_topic_partition_states([TP])).values[TP]
        widened = now.leader_and_isr._replace(isr=(leader, follower))
        written = await admin.update_leader_and_isr({TP: widened}, now.controller_epoch, NO_FENCING)
        assert not written.failed and not written.to_retry

        await crash(cluster, leader)  # its session expired at once: no waiting out the 6 s timeout
        found = await wait_for_states(admin, "t", 1, lambda s: s[0].leader_and_isr.leader == follower,
                                      "the follower ZooKeeper lists in the ISR elected")
        assert found[0].leader_and_isr.isr == (follower,)
        await wait_until(lambda: controller.context.partition_state(TP).name == "ONLINE", what="online")
    finally:
        await cluster.shutdown()
