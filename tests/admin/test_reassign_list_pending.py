"""``reassign --list`` also names what ``/admin/reassign_partitions`` asks for that no controller has begun: it
said "No partition reassignments found." while a submitted reassignment waited for a controller."""

from __future__ import annotations

from zkcontroller.admin.reassign import ReassignCommand, list_output, not_yet_started_lines
from zkcontroller.admin.topics import TopicAdmin
from zkcontroller.model import ReplicaAssignment, TopicPartition
from zkcontroller.zk.kafka_zk_client import KafkaZkClient


async def test_a_submitted_reassignment_no_controller_began_is_listed(zk: KafkaZkClient, admin: TopicAdmin) -> None:
    await admin.create_topic_with_assignment("t", {0: [1, 2], 1: [2, 3]})
    command = ReassignCommand(zk)
    assert not_yet_started_lines(await command.not_yet_started(await command.list())) == []

    await zk.create_partition_reassignment({TopicPartition("t", 1): (3, 1)})  # no controller runs here
    found = await command.list()
    pending = await command.not_yet_started(found)
    # Kafka's "No partition reassignments found." would contradict the move listed under it: not printed then
    assert list_output(found, pending, {}, None) == [
        "Submitted in /admin/reassign_partitions, not yet begun by a controller (is one running?):",
        "t-1: target replicas: 3,1."]
    assert list_output(found, {}, {}, None) == ["No partition reassignments found."]  # Kafka's, with nothing to come


async def test_begun_and_waiting_moves_are_listed_under_their_own_headings(zk: KafkaZkClient,
                                                                            admin: TopicAdmin) -> None:
    begun = {TopicPartition("t", 0): ReplicaAssignment((3, 1, 2), adding_replicas=(3,), removing_replicas=(2,))}
    assert list_output(begun, {TopicPartition("t", 1): (3, 1)}, {}, None) == [
        "Current partition reassignments:", "t-0: replicas: 3,1,2. adding: 3. removing: 2.",
        "Submitted in /admin/reassign_partitions, not yet begun by a controller (is one running?):",
        "t-1: target replicas: 3,1."]


async def test_a_malformed_submission_lists_nothing_more(zk: KafkaZkClient, admin: TopicAdmin) -> None:
    await admin.create_topic_with_assignment("t", {0: [1, 2]})
    await zk.session.ensure_path("/admin")
    await zk.session.create("/admin/reassign_partitions", b"{not json")
    assert await ReassignCommand(zk).not_yet_started({}) == {}
