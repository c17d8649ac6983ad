"""The controller's requests (`protocol.control_requests`) to and from the wire, at any version of the table.

The plain values are version-free; this module knows which layout each version uses (partitions listed
alone in old versions, grouped by topic in newer ones; topic ids from LeaderAndIsr v5 and UpdateMetadata
v7) and leaves the bytes to `codec`. LeaderAndIsr v5's response names topics by id, so decoding it needs
the request it answers.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from zkcontroller.model import ZERO_TOPIC_ID, Broker, EndPoint, TopicId, TopicPartition
from zkcontroller.protocol.control_requests import (
    AnyControlRequest,
    ApiKey,
    ControlResponse,
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
    FetchRequest,
    FetchResponse,
)
from zkcontroller.protocol.wire import codec, fetch_codec
from zkcontroller.protocol.wire.codec import WireFormatError
from zkcontroller.protocol.wire.messages import (
    ALTER_ISR,
    CONTROLLED_SHUTDOWN,
    INTER_BROKER_APIS,
    LEADER_AND_ISR,
    STOP_REPLICA,
    UPDATE_METADATA,
)
from zkcontroller.protocol.wire.plain_values import by_topic, error_of

WireRequest = AnyControlRequest | ControlledShutdownRequest | AlterIsrRequest | FetchRequest
WireResponse = ControlResponse | ControlledShutdownResponse | AlterIsrResponse | FetchResponse

SECURITY_PROTOCOL_IDS = {"PLAINTEXT": 0, "SSL": 1, "SASL_PLAINTEXT": 2, "SASL_SSL": 3}
SECURITY_PROTOCOL_NAMES = {v: k for k, v in SECURITY_PROTOCOL_IDS.items()}
DEFAULT_LISTENER = "PLAINTEXT"


def _tid(topic_id: TopicId | None) -> bytes:
    return (topic_id or ZERO_TOPIC_ID).raw


def _from_tid(raw: bytes) -> TopicId | None:
    return None if raw == ZERO_TOPIC_ID.raw else TopicId(raw)


def _grouped(states: Iterable[Any]) -> dict[str, list[Any]]:
    """Partition states (which name their topic) under their topic."""
    return by_topic(states, lambda s: s.topic)


# ---------------------------------------------------------------------------------------------- requests

def _lai_state(s: LeaderAndIsrPartitionState) -> dict[str, Any]:
    return {"topic_name": s.topic, "partition_index": s.partition, "controller_epoch": s.controller_epoch,
            "leader": s.leader, "leader_epoch": s.leader_epoch, "isr": list(s.isr), "zk_version": s.zk_version,
            "replicas": list(s.replicas), "adding_replicas": list(s.adding_replicas),
            "removing_replicas": list(s.removing_replicas), "is_new": s.is_new}


def _umd_state(s: UpdateMetadataPartitionState) -> dict[str, Any]:
    return {"topic_name": s.topic, "partition_index": s.partition, "controller_epoch": s.controller_epoch,
            "leader": s.leader, "leader_epoch": s.leader_epoch, "isr": list(s.isr), "zk_version": s.zk_version,
            "replicas": list(s.replicas), "offline_replicas": list(s.offline_replicas)}


def _umd_broker(b: Broker) -> dict[str, Any]:
    first = b.endpoints[0] if b.endpoints else EndPoint("", -1, DEFAULT_LISTENER, DEFAULT_LISTENER)
    return {"id": b.id, "v0_host": first.host or "", "v0_port": first.port, "rack": b.rack,
            "endpoints": [{"port": e.port, "host": e.host or "", "listener": e.listener_name,
                           "security_protocol": SECURITY_PROTOCOL_IDS.get(e.security_protocol, 0)}
                          for e in b.endpoints]}


def _grouped_by_tp(items: Iterable[Any]) -> dict[str, list[Any]]:
    """Per-partition items (which carry a `TopicPartition`) under their topic."""
    return by_topic(items, lambda item: item.topic_partition.topic)


def request_body(request: AnyControlRequest | ControlledShutdownRequest | AlterIsrRequest) -> dict[str, Any]:
    """The version-free dict of ``request`` (every layout's fields filled; the codec writes the version's).
    Fetch has a codec of its own (`fetch_codec`)."""
    if isinstance(request, ControlledShutdownRequest):
        return {"broker_id": request.broker_id, "broker_epoch": request.broker_epoch}
    if isinstance(request, AlterIsrRequest):
        return {"broker_id": request.broker_id, "broker_epoch": request.broker_epoch, "topics": [
            {"name": t, "partitions": [{"partition_index": p.topic_partition.partition, "leader_epoch": p.leader_epoch,
                                        "new_isr": list(p.new_isr), "current_isr_version": p.current_isr_version}
                                       for p in ps]}
            for t, ps in _grouped_by_tp(request.partitions).items()]}
    common = {"controller_id": request.controller_id, "controller_epoch": request.controller_epoch,
              "broker_epoch": request.broker_epoch}
    if isinstance(request, LeaderAndIsrRequest):
        ids = dict(request.topic_ids)
        leaders = []
        for b in request.live_leaders:
            e = b.endpoint(DEFAULT_LISTENER) or (b.endpoints[0] if b.endpoints else None)
            leaders.append({"broker_id": b.id, "host_name": (e.host or "") if e else "", "port": e.port if e else -1})
        return {**common, "type": 0,
                "ungrouped_partition_states": [_lai_state(s) for s in request.partition_states],
                "topic_states": [{"topic_name": t, "topic_id": _tid(ids.get(t)),
                                  "partition_states": [_lai_state(s) for s in ss]}
                                 for t, ss in _grouped(request.partition_states).items()],
                "live_leaders": leaders}
    if isinstance(request, UpdateMetadataRequest):
        ids = dict(request.topic_ids)
        return {**common,
                "ungrouped_partition_states": [_umd_state(s) for s in request.partition_states],
                "topic_states": [{"topic_name": t, "topic_id": _tid(ids.get(t)),
                                  "partition_states": [_umd_state(s) for s in ss]}
                                 for t, ss in _grouped(request.partition_states).items()],
                "live_brokers": [_umd_broker(b) for b in request.live_brokers]}
    states = request.partition_states
    return {**common,
            "delete_partitions": any(s.delete_partition for s in states),
            "ungrouped_partitions": [{"topic_name": s.topic, "partition_index": s.partition} for s in states],
            "topics": [{"name": t, "partition_indexes": [s.partition for s in ss]}
                       for t, ss in _grouped(states).items()],
            "topic_states": [{"topic_name": t, "partition_states": [
                {"partition_index": s.partition, "leader_epoch": s.leader_epoch,
                 "delete_partition": s.delete_partition} for s in ss]} for t, ss in _grouped(states).items()]}


def encode_request(request: WireRequest, version: int) -> bytes:
    """The body of ``request`` at ``version``. StopReplica before v3 has one delete flag for the whole request:
    a mixed request cannot be written there (the controller sends two, as Kafka's does)."""
    if isinstance(request, FetchRequest):
        return fetch_codec.encode_request(request, version)
    if isinstance(request, StopReplicaRequest) and version < 3:
        flags = {s.delete_partition for s in request.partition_states}
        if len(flags) > 1:
            raise ValueError("StopReplica before v3 cannot mix deleting and non-deleting partitions")
    return codec.encode(INTER_BROKER_APIS[request.api_key].request, version, request_body(request))


def _lai_from(d: dict[str, Any], topic: str) -> LeaderAndIsrPartitionState:
    return LeaderAndIsrPartitionState(topic, d["partition_index"], d["controller_epoch"], d["leader"],
                                      d["leader_epoch"], tuple(d["isr"]), d["zk_version"], tuple(d["replicas"]),
                                      tuple(d["adding_replicas"] or ()), tuple(d["removing_replicas"] or ()),
                                      d["is_new"])


def _umd_from(d: dict[str, Any], topic: str) -> UpdateMetadataPartitionState:
    return UpdateMetadataPartitionState(topic, d["partition_index"], d["controller_epoch"], d["leader"],
                                        d["leader_epoch"], tuple(d["isr"]), d["zk_version"], tuple(d["replicas"]),
                                        tuple(d["offline_replicas"]))


def _broker_from(d: dict[str, Any], version: int) -> Broker:
    if version == 0:
        endpoints: tuple[EndPoint, ...] = (EndPoint(d["v0_host"], d["v0_port"], DEFAULT_LISTENER, DEFAULT_LISTENER),)
    else:
        endpoints = tuple(
            EndPoint(e["host"], e["port"],
                     e["listener"] or SECURITY_PROTOCOL_NAMES.get(e["security_protocol"], DEFAULT_LISTENER),
                     SECURITY_PROTOCOL_NAMES.get(e["security_protocol"], DEFAULT_LISTENER))
            for e in d["endpoints"])
    return Broker(d["id"], endpoints, d["rack"])


def _topic_ids(topic_states: list[dict[str, Any]]) -> tuple[tuple[str, TopicId | None], ...]:
    return tuple((t["topic_name"], _from_tid(t["topic_id"])) for t in topic_states
                 if t["topic_id"] != ZERO_TOPIC_ID.raw)


def decode_request(api_key: int, version: int, buf: bytes | memoryview, offset: int = 0) -> WireRequest:
    """A LeaderAndIsr, UpdateMetadata, StopReplica, ControlledShutdown or AlterIsr body as plain values;
    `WireFormatError` on bad bytes."""
    if api_key == ApiKey.FETCH:
        return fetch_codec.decode_request(version, buf, offset)
    d = codec.decode(INTER_BROKER_APIS[api_key].request, version, buf, offset, exact=False)
    if api_key == ApiKey.CONTROLLED_SHUTDOWN:
        return ControlledShutdownRequest(d["broker_id"], d["broker_epoch"])
    if api_key == ApiKey.ALTER_ISR:
        return AlterIsrRequest(d["broker_id"], d["broker_epoch"], tuple(
            AlterIsrPartition(TopicPartition(t["name"], p["partition_index"]), p["leader_epoch"], tuple(p["new_isr"]),
                              p["current_isr_version"]) for t in d["topics"] for p in t["partitions"]))
    common = (d["controller_id"], d["controller_epoch"], d["broker_epoch"])
    try:
        if api_key == ApiKey.LEADER_AND_ISR:
            if version < 2:
                states = tuple(_lai_from(s, s["topic_name"]) for s in d["ungrouped_partition_states"])
            else:
                states = tuple(_lai_from(s, t["topic_name"]) for t in d["topic_states"] for s in t["partition_states"])
            leaders = tuple(Broker(x["broker_id"], (EndPoint(x["host_name"], x["port"], DEFAULT_LISTENER,
                                                             DEFAULT_LISTENER),)) for x in d["live_leaders"])
            return LeaderAndIsrRequest(*common, partition_states=states, topic_ids=_topic_ids(d["topic_states"]),
                                       live_leaders=leaders)
        if api_key == ApiKey.UPDATE_METADATA:
            if version < 5:
                ustates = tuple(_umd_from(s, s["topic_name"]) for s in d["ungrouped_partition_states"])
            else:
                ustates = tuple(_umd_from(s, t["topic_name"]) for t in d["topic_states"]
                                for s in t["partition_states"])
            return UpdateMetadataRequest(*common, partition_states=ustates,
                                         live_brokers=tuple(_broker_from(b, version) for b in d["live_brokers"]),
                                         topic_ids=_topic_ids(d["topic_states"]))
        if api_key == ApiKey.STOP_REPLICA:
            if version == 0:
                sstates = tuple(StopReplicaPartitionState(p["topic_name"], p["partition_index"], -1,
                                                          d["delete_partitions"]) for p in d["ungrouped_partitions"])
            elif version < 3:
                sstates = tuple(StopReplicaPartitionState(t["name"], p, -1, d["delete_partitions"])
                                for t in d["topics"] for p in t["partition_indexes"])
            else:
                sstates = tuple(StopReplicaPartitionState(t["topic_name"], p["partition_index"], p["leader_epoch"],
                                                          p["delete_partition"])
                                for t in d["topic_states"] for p in t["partition_states"])
            return StopReplicaRequest(*common, partition_states=sstates)
    except (TypeError, ValueError) as e:  # e.g. a null where our values need a list
        raise WireFormatError(f"{INTER_BROKER_APIS[api_key].name} v{version}: {e}") from None
    raise ValueError(f"api key {api_key} is not a control request")


# ---------------------------------------------------------------------------------------------- responses

def encode_response(response: WireResponse, version: int, request: WireRequest | None = None) -> bytes:
    """The body of ``response`` at ``version``; LeaderAndIsr v5 needs ``request`` for the topic ids."""
    if isinstance(response, FetchResponse):
        return fetch_codec.encode_response(response, version)
    if isinstance(response, ControlledShutdownResponse):
        return codec.encode(CONTROLLED_SHUTDOWN.response, version, {
            "error_code": int(response.error),
            "remaining_partitions": [{"topic_name": tp.topic, "partition_index": tp.partition}
                                     for tp in response.remaining_partitions]})
    if isinstance(response, AlterIsrResponse):
        return codec.encode(ALTER_ISR.response, version, {"error_code": int(response.error), "topics": [
            {"name": t, "partitions": [{"partition_index": r.topic_partition.partition, "error_code": int(r.error),
                                        "leader_id": r.leader_id, "leader_epoch": r.leader_epoch, "isr": list(r.isr),
                                        "current_isr_version": r.current_isr_version} for r in rs]}
            for t, rs in _grouped_by_tp(response.partitions).items()]})
    errors: list[dict[str, Any]] = [{"topic_name": tp.topic, "partition_index": tp.partition, "error_code": int(e)}
              for tp, e in response.partition_errors]
    body: dict[str, Any] = {"error_code": int(response.error), "partition_errors": errors}
    if response.api_key == ApiKey.LEADER_AND_ISR:
        ids = dict(request.topic_ids) if isinstance(request, LeaderAndIsrRequest) else {}
        body["topics"] = [{"topic_id": _tid(ids.get(t)), "partition_errors": es}
                          for t, es in by_topic(errors, lambda e: e["topic_name"]).items()]
        spec = LEADER_AND_ISR.response
    elif response.api_key == ApiKey.UPDATE_METADATA:
        spec = UPDATE_METADATA.response
    else:
        spec = STOP_REPLICA.response
    return codec.encode(spec, version, body)


def decode_response(request: WireRequest, version: int, buf: bytes | memoryview, offset: int = 0) -> WireResponse:
    api_key = request.api_key
    if api_key == ApiKey.FETCH:
        return fetch_codec.decode_response(version, buf, offset)
    d = codec.decode(INTER_BROKER_APIS[api_key].response, version, buf, offset)
    if api_key == ApiKey.CONTROLLED_SHUTDOWN:
        return ControlledShutdownResponse(error_of(d["error_code"]), tuple(
            TopicPartition(p["topic_name"], p["partition_index"]) for p in d["remaining_partitions"]))
    if api_key == ApiKey.ALTER_ISR:
        return AlterIsrResponse(error_of(d["error_code"]), tuple(
            AlterIsrPartitionResult(TopicPartition(t["name"], p["partition_index"]), error_of(p["error_code"]),
                                    p["leader_id"], p["leader_epoch"], tuple(p["isr"]), p["current_isr_version"])
            for t in d["topics"] for p in t["partitions"]))
    if api_key == ApiKey.UPDATE_METADATA:
        return ControlResponse(api_key, error_of(d["error_code"]))
    if api_key == ApiKey.LEADER_AND_ISR and version >= 5:
        assert isinstance(request, LeaderAndIsrRequest)
        names = {_tid(i): t for t, i in request.topic_ids if i is not None}
        in_order = list(dict.fromkeys(s.topic for s in request.partition_states))
        errors = tuple((TopicPartition(_topic_name(t["topic_id"], names, in_order, n), p["partition_index"]),
                        error_of(p["error_code"]))
                       for n, t in enumerate(d["topics"]) for p in t["partition_errors"])
    else:
        errors = tuple((TopicPartition(p["topic_name"], p["partition_index"]), error_of(p["error_code"]))
                       for p in d["partition_errors"])
    return ControlResponse(api_key, error_of(d["error_code"]), errors)


def _topic_name(raw: bytes, names: dict[bytes, str], in_order: list[str], position: int) -> str:
    """A v5 response's topic by its id; a topic sent without an id (zero uuid) by its position, since brokers
    answer topics in the order of the request."""
    name = names.get(raw) if raw != ZERO_TOPIC_ID.raw else None
    if name is None and position < len(in_order):
        name = in_order[position]
    return name or ""
