"""The controller's requests and broker responses through the wire table: exact round trips at the versions
a 2.8 controller sends, and what older versions keep."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from zkcontroller.model import Broker, EndPoint, TopicId, TopicPartition
from zkcontroller.protocol.control_requests import (
    ApiKey,
    ControlResponse,
    Errors,
    LeaderAndIsrPartitionState,
    LeaderAndIsrRequest,
    StopReplicaPartitionState,
    StopReplicaRequest,
    UpdateMetadataPartitionState,
    UpdateMetadataRequest,
)
from zkcontroller.protocol.inter_broker import (
    AlterIsrPartition,
    AlterIsrPartitionResult,
    AlterIsrRequest,
    AlterIsrResponse,
    ControlledShutdownRequest,
    ControlledShutdownResponse,
)
from zkcontroller.protocol.wire import control_codec as cc

ids = st.integers(0, 5)
replicas = st.lists(ids, max_size=3, unique=True).map(tuple)
topics = st.sampled_from(["a", "b", "orders"])
topic_id = st.binary(min_size=16, max_size=16).filter(lambda b: b != bytes(16)).map(TopicId)
i32 = st.integers(-1, 2**31 - 1)

lai_state = st.builds(LeaderAndIsrPartitionState, topics, st.integers(0, 9), i32, ids, i32, replicas, i32, replicas,
                      replicas, replicas, st.booleans())
umd_state = st.builds(UpdateMetadataPartitionState, topics, st.integers(0, 9), i32, ids, i32, replicas, i32,
                      replicas, replicas)
endpoint = st.builds(EndPoint, st.sampled_from(["localhost", "10.0.0.1"]), st.integers(1, 65535),
                     st.sampled_from(["PLAINTEXT", "INTERNAL"]), st.sampled_from(["PLAINTEXT", "SSL"]))
broker = st.builds(Broker, ids, st.lists(endpoint, min_size=1, max_size=2).map(tuple),
                   st.none() | st.sampled_from(["r1", "r2"]))
topic_ids = st.dictionaries(topics, topic_id).map(lambda d: tuple(d.items()))


def _sorted_by_topic(states):
    """The grouped layouts list partitions topic by topic, in first-seen topic order."""
    order = list(dict.fromkeys(s.topic for s in states))
    return tuple(sorted(states, key=lambda s: order.index(s.topic)))


@settings(max_examples=200, deadline=None)
@given(i32, i32, st.integers(-1, 2**40), st.lists(lai_state, max_size=4), topic_ids)
def test_leader_and_isr_v5_round_trips(cid, epoch, broker_epoch, states, tids):
    states = _sorted_by_topic(states)
    used = {s.topic for s in states}
    tids = tuple((t, i) for t, i in tids if t in used)
    leader = Broker(1, (EndPoint("localhost", 9093, "PLAINTEXT", "PLAINTEXT"),))
    request = LeaderAndIsrRequest(cid, epoch, broker_epoch, partition_states=states, topic_ids=tids,
                                  live_leaders=(leader,))
    decoded = cc.decode_request(ApiKey.LEADER_AND_ISR, 5, cc.encode_request(request, 5))
    assert replace(decoded, topic_ids=()) == replace(request, topic_ids=())
    assert dict(decoded.topic_ids) == dict(tids)


@settings(max_examples=200, deadline=None)
@given(i32, i32, st.integers(-1, 2**40), st.lists(umd_state, max_size=4), st.lists(broker, max_size=3), topic_ids)
def test_update_metadata_v7_round_trips(cid, epoch, broker_epoch, states, brokers, tids):
    states = _sorted_by_topic(states)
    used = {s.topic for s in states}
    tids = tuple((t, i) for t, i in tids if t in used)
    request = UpdateMetadataRequest(cid, epoch, broker_epoch, partition_states=states,
                                    live_brokers=tuple(brokers), topic_ids=tids)
    decoded = cc.decode_request(ApiKey.UPDATE_METADATA, 7, cc.encode_request(request, 7))
    assert replace(decoded, topic_ids=()) == replace(request, topic_ids=())
    assert dict(decoded.topic_ids) == dict(tids)


@settings(max_examples=200, deadline=None)
@given(i32, i32, st.integers(-1, 2**40),
       st.lists(st.builds(StopReplicaPartitionState, topics, st.integers(0, 9), i32, st.booleans()), max_size=4))
def test_stop_replica_v3_round_trips(cid, epoch, broker_epoch, states):
    request = StopReplicaRequest(cid, epoch, broker_epoch, partition_states=_sorted_by_topic(states))
    assert cc.decode_request(ApiKey.STOP_REPLICA, 3, cc.encode_request(request, 3)) == request


def test_older_versions_keep_what_they_carry():
    state = LeaderAndIsrPartitionState("t", 0, 3, 1, 2, (1, 2), 5, (1, 2, 3), (3,), (), True)
    request = LeaderAndIsrRequest(1, 3, 100, partition_states=(state,),
                                  topic_ids=(("t", TopicId(bytes(range(1, 17)))),))
    v1 = cc.decode_request(ApiKey.LEADER_AND_ISR, 1, cc.encode_request(request, 1))
    assert v1 == replace(request, broker_epoch=-1, topic_ids=(),
                         partition_states=(state._replace(adding_replicas=()),))
    v4 = cc.decode_request(ApiKey.LEADER_AND_ISR, 4, cc.encode_request(request, 4))
    assert v4 == replace(request, topic_ids=())


def test_leader_and_isr_v5_response_names_topics_by_id():
    tid = TopicId(bytes(range(1, 17)))
    request = LeaderAndIsrRequest(1, 3, 100, partition_states=(
        LeaderAndIsrPartitionState("t", 0, 3, 1, 2, (1,), 0, (1,)),), topic_ids=(("t", tid),))
    response = ControlResponse(ApiKey.LEADER_AND_ISR, Errors.NONE,
                               ((TopicPartition("t", 0), Errors.STALE_CONTROLLER_EPOCH),))
    body = cc.encode_response(response, 5, request)
    assert tid.raw in body and b"\x02t" not in body
    assert cc.decode_response(request, 5, body) == response


def test_stop_replica_and_update_metadata_responses_round_trip():
    stop = StopReplicaRequest(1, 2, 3)
    response = ControlResponse(ApiKey.STOP_REPLICA, Errors.STALE_BROKER_EPOCH,
                               ((TopicPartition("x", 2), Errors.FENCED_LEADER_EPOCH),))
    for v in range(4):
        assert cc.decode_response(stop, v, cc.encode_response(response, v)) == response
    umd = UpdateMetadataRequest(1, 2, 3)
    answer = ControlResponse(ApiKey.UPDATE_METADATA, Errors.STALE_CONTROLLER_EPOCH)
    assert cc.decode_response(umd, 7, cc.encode_response(answer, 7)) == answer


def test_controlled_shutdown_round_trips_at_every_version():
    request = ControlledShutdownRequest(3, 4242)
    response = ControlledShutdownResponse(Errors.NONE, (TopicPartition("t", 1), TopicPartition("u", 0)))
    for v in range(4):
        decoded = cc.decode_request(ApiKey.CONTROLLED_SHUTDOWN, v, cc.encode_request(request, v))
        assert decoded == (request if v >= 2 else ControlledShutdownRequest(3, -1))  # v0/v1 carry no epoch
        assert cc.decode_response(request, v, cc.encode_response(response, v)) == response


@settings(max_examples=100, deadline=None)
@given(st.lists(st.builds(AlterIsrPartition, st.builds(TopicPartition, topics, st.integers(0, 9)), i32, replicas,
                          i32), max_size=4),
       st.lists(st.builds(AlterIsrPartitionResult, st.builds(TopicPartition, topics, st.integers(0, 9)),
                          st.sampled_from(list(Errors)), ids, i32, replicas, i32), max_size=4))
def test_alter_isr_round_trips(partitions, results):
    request = AlterIsrRequest(2, 77, tuple(_sorted_by_tp(partitions)))
    assert cc.decode_request(ApiKey.ALTER_ISR, 0, cc.encode_request(request, 0)) == request
    response = AlterIsrResponse(Errors.NONE, tuple(_sorted_by_tp(results)))
    assert cc.decode_response(request, 0, cc.encode_response(response, 0)) == response


def _sorted_by_tp(items):
    order = list(dict.fromkeys(i.topic_partition.topic for i in items))
    return sorted(items, key=lambda i: order.index(i.topic_partition.topic))
