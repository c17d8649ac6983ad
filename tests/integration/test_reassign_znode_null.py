"""``/admin/reassign_partitions`` holding null data, or JSON Kafka cannot bind, read as Kafka 2.8.2 reads it.

``KafkaZkClient.getPartitionReassignment`` logs a JSON error ("Ignoring partition reassignment due to invalid json",
WARN) and reads no reassignment: ``maybeRemoveFromZkReassignment`` then deletes the znode when a reassignment
completes. Null data is no JSON error (Jackson's ``readValue`` refuses a null array: IllegalArgumentException), nor
are the nulls its decoder dereferences (``{"version":1}``: NullPointerException): those throw out of the event
("Error processing event ...", ERROR), and the znode stays. At failover Kafka's throw fails the failover at every
election; ours logs it and carries on (docs/coordination.md).
"""

from __future__ import annotations

import logging

import pytest
from tests.helpers import wait_until
from tests.integration.conftest import ClusterFactory
from tests.integration.test_controller_cluster import create_topic, wait_for_states
from tests.integration.test_reassignment import TP, assignment, controller_api_ok, join_isr, start_moving

from zkcontroller.coordination.api import CoordinationSession
from zkcontroller.model import ReplicaAssignment, TopicPartition
from zkcontroller.zk import paths
from zkcontroller.zk.kafka_zk_client import KafkaZkClient
from zkcontroller.zk.znodes import BoundReassignment

pytestmark = pytest.mark.hand_written_isr

PATH = paths.REASSIGN_PARTITIONS
KAFKA_THROWS = [None, b'{"version":1}', b"null", b'{"version":1,"partitions":[null]}']
KAFKA_IGNORES = [b"not json", b"", b'{"version":1,"partitions":[],"log_dirs":[]}', b'{"version":1,"partitions":7}']


def _uncaught(caplog: pytest.LogCaptureFixture, event: str) -> list[logging.LogRecord]:
    """ERROR records of an event that raised, whose exception names the znode."""
    return [r for r in caplog.records if r.levelno == logging.ERROR
            and r.getMessage().endswith(f"Error processing event {event}")
            and r.exc_info is not None and PATH in str(r.exc_info[1])]


INVALID_JSON = f"Ignoring partition reassignment due to invalid json: Malformed znode {PATH}"


def _invalid_json_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "kafka.zk.KafkaZkClient"
            and r.levelno == logging.WARNING and r.getMessage().startswith(INVALID_JSON)]


async def _still_serves(admin: KafkaZkClient, topic: str) -> None:
    await create_topic(admin, topic, {0: [1, 2]})
    await wait_for_states(admin, topic, 1, lambda s: s[0].leader_and_isr.leader != -1, f"{topic}-0 led")


async def _complete_api_reassignment_over(make_cluster: ClusterFactory, admin: KafkaZkClient,
                                          session: CoordinationSession, data: bytes | None) -> None:
    """Start moving-0 from [1,2] to [2,3] through the API, write ``data`` at ``PATH``, then let it complete."""
    _cluster, controller = await start_moving(make_cluster, admin)
    assert await controller.alter_partition_reassignments({TP: [2, 3]}) == {TP: controller_api_ok()}
    await admin.session.create(PATH, data)
    await join_isr(admin, session, 3)

    async def recorded() -> bool:
        return await assignment(admin) == ReplicaAssignment((2, 3))

    await wait_until(recorded, timeout_s=30.0, what="RS = TRS in the topic znode (B6)")
    await wait_until(lambda: TP not in controller.context.partitions_being_reassigned, what="completed")


@pytest.mark.parametrize("data", KAFKA_THROWS, ids=["null", "no-partitions", "json-null", "null-entry"])
async def test_a_completion_leaves_a_znode_kafka_throws_on_and_logs_the_error(
    make_cluster: ClusterFactory, admin: KafkaZkClient, session: CoordinationSession,
    caplog: pytest.LogCaptureFixture, data: bytes | None
) -> None:
    caplog.set_level(logging.INFO)
    await _complete_api_reassignment_over(make_cluster, admin, session, data)
    # its creation: processZkPartitionReassignment throws; the completion: maybeRemoveFromZkReassignment throws
    await wait_until(lambda: _uncaught(caplog, "ZkPartitionReassignment"), what="the creation's event failed")
    await wait_until(lambda: _uncaught(caplog, "CompletedReassignmentsFlush"), what="the completion's B7 failed")
    assert (await admin.session.get_data(PATH))[0] == data  # not deleted, not rewritten
    assert not _invalid_json_warnings(caplog)
    assert not any("Deleting zk path" in r.getMessage() for r in caplog.records)
    await _still_serves(admin, "after")


@pytest.mark.parametrize("data", KAFKA_IGNORES, ids=["not-json", "empty", "unknown-field", "not-a-list"])
async def test_a_completion_deletes_a_znode_kafka_reads_as_invalid_json(
    make_cluster: ClusterFactory, admin: KafkaZkClient, session: CoordinationSession,
    caplog: pytest.LogCaptureFixture, data: bytes
) -> None:
    caplog.set_level(logging.INFO)
    await _complete_api_reassignment_over(make_cluster, admin, session, data)

    async def deleted() -> bool:
        return not await admin.path_exists(PATH)

    await wait_until(deleted, timeout_s=30.0, what=f"{PATH} deleted on completion, as Kafka does")
    # once at its creation (nothing to reassign), once at the completion (nothing left: deleted)
    await wait_until(lambda: len(_invalid_json_warnings(caplog)) >= 2, what="Kafka's warning, twice")
    messages = [r.getMessage() for r in caplog.records]
    assert any(m.endswith("Removing partitions Map() from the list of reassigned partitions in zookeeper")
               for m in messages)
    assert any(m.endswith(f"No more partitions need to be reassigned. Deleting zk path {PATH}") for m in messages)
    assert not _uncaught(caplog, "ZkPartitionReassignment")
    await _still_serves(admin, "after")


@pytest.mark.parametrize("data", [None, b'{"version":1}'], ids=["null", "no-partitions"])
async def test_a_failover_over_a_znode_kafka_throws_on_logs_it_and_goes_on(
    make_cluster: ClusterFactory, admin: KafkaZkClient, caplog: pytest.LogCaptureFixture, data: bytes | None
) -> None:
    """Kafka's failover throws there ("Error while electing or becoming controller", at every election); ours
    reports the znode at ERROR, leaves it, and serves."""
    caplog.set_level(logging.INFO)
    cluster = await make_cluster([1, 2, 3])
    first = await cluster.wait_for_controller()
    await admin.session.create(PATH, data)
    await cluster.stop_broker(first.controller_id)
    second = await cluster.wait_for_controller(exclude=first.controller_id)
    line = (f"Ignoring the partition reassignment at {PATH}, which Kafka 2.8 cannot read either (its failover fails "
            f"there): Malformed znode {PATH}")
    await wait_until(lambda: any(r.levelno == logging.ERROR and line in r.getMessage() for r in caplog.records),
                     what="the znode reported at failover")
    assert not any("Error while electing or becoming controller" in r.getMessage() for r in caplog.records)
    assert second.is_active
    assert (await admin.session.get_data(PATH))[0] == data
    await create_topic(admin, "after", {0: [second.controller_id]})
    await wait_for_states(admin, "after", 1, lambda s: s[0].leader_and_isr.leader != -1, "after-0 led")


async def test_an_api_reassignment_over_a_null_znode_is_not_answered_as_in_kafka(
    make_cluster: ClusterFactory, admin: KafkaZkClient, caplog: pytest.LogCaptureFixture
) -> None:
    """Kafka's ``processApiPartitionReassignment`` removes the partitions from the znode first, and throws there:
    its callback is never called (the client times out), nothing moves, and the znode stays."""
    import asyncio

    caplog.set_level(logging.INFO)
    _cluster, controller = await start_moving(make_cluster, admin)
    await admin.session.create(PATH, None)
    await wait_until(lambda: _uncaught(caplog, "ZkPartitionReassignment"), what="the creation's event failed")
    answer = asyncio.ensure_future(controller.alter_partition_reassignments({TP: [2, 3]}))
    try:
        await wait_until(lambda: any(r.levelno == logging.ERROR and r.exc_info is not None
                                     and "Error processing event ApiPartitionReassignment" in r.getMessage()
                                     for r in caplog.records), what="the API event failed")
        assert not answer.done()
        assert await assignment(admin) == ReplicaAssignment((1, 2))
        assert (await admin.session.get_data(PATH))[0] is None
    finally:
        answer.cancel()


async def test_entries_kafka_binds_but_cannot_use_fail_alone_and_the_valid_ones_start(
    make_cluster: ClusterFactory, admin: KafkaZkClient, session: CoordinationSession,
    caplog: pytest.LogCaptureFixture
) -> None:
    """Kafka's Jackson binding takes a null topic, a numeric topic (as its text) and any JSON as a replica: the
    znode is read, its valid entry starts, and each unusable one fails alone in ``maybeTriggerPartitionReassignment``
    (unknown partition, or UNKNOWN_SERVER_ERROR on unboxing a replica) and is removed from the znode."""
    caplog.set_level(logging.INFO)
    _cluster, _controller = await start_moving(make_cluster, admin)
    await create_topic(admin, "other", {0: [1, 2]})
    await wait_for_states(admin, "other", 1, lambda s: s[0].leader_and_isr.leader != -1, "other-0 led")
    await admin.session.create(PATH, b'{"version":1,"partitions":[{"topic":"moving","partition":0,"replicas":[2,3]},'
                                     b'{"topic":"other","partition":0,"replicas":["3",1]},'
                                     b'{"partition":0,"replicas":[1]},{"topic":5,"partition":"0","replicas":[1]}]}')

    async def only_the_valid_entry_left() -> bool:
        data = (await admin.session.get_data(PATH))[0]
        return data is not None and b'"other"' not in data and b"null" not in data and b'"5"' not in data

    await wait_until(only_the_valid_entry_left, timeout_s=30.0, what="the unusable entries removed")
    assert (await admin.get_bound_partition_reassignment()) == BoundReassignment({TP: (2, 3)}, {})
    messages = [r.getMessage() for r in caplog.records]
    assert any(m.endswith("Error completing reassignment of partition other-0") for m in messages)
    failed = [m for m in messages if "Failed reassignment through zk with the following errors: Map(5-0 -> " in m]
    assert failed and "null-0 -> " in failed[0] and "other-0 -> " in failed[0] and "moving-0" not in failed[0]
    assert not _invalid_json_warnings(caplog)
    assert (await assignment(admin)).target_replicas == (2, 3)  # the valid entry started
    await join_isr(admin, session, 3)

    async def completed() -> bool:
        return await assignment(admin) == ReplicaAssignment((2, 3)) and not await admin.path_exists(PATH)

    await wait_until(completed, timeout_s=30.0, what="moving-0 reassigned and the znode deleted")
    assert await assignment(admin, TopicPartition("other", 0)) == ReplicaAssignment((1, 2))
