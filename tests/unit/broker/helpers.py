"""Builders for control requests in broker tests (defaults: controller 9 at epoch 1, broker 1 at epoch 100)."""

from __future__ import annotations

from zkcontroller.model import Broker, EndPoint, TopicId
from zkcontroller.protocol.control_requests import (
    LeaderAndIsrPartitionState,
    LeaderAndIsrRequest,
    StopReplicaPartitionState,
    StopReplicaRequest,
    UpdateMetadataPartitionState,
    UpdateMetadataRequest,
)

CONTROLLER = 9
MY_EPOCH = 100


def broker(broker_id: int, rack: str | None = None) -> Broker:
    endpoints = (EndPoint(f"host{broker_id}", 9092, "PLAINTEXT", "PLAINTEXT"),
                 EndPoint(f"host{broker_id}", 9093, "SSL", "SSL"))
    return Broker(broker_id, endpoints, rack)


def lai_state(partition: int = 0, leader: int = 1, leader_epoch: int = 0, replicas: tuple[int, ...] = (1, 2),
              isr: tuple[int, ...] | None = None, topic: str = "t") -> LeaderAndIsrPartitionState:
    return LeaderAndIsrPartitionState(topic, partition, 1, leader, leader_epoch,
                                      replicas if isr is None else isr, 0, replicas)


def leader_and_isr(*states: LeaderAndIsrPartitionState, controller_epoch: int = 1, broker_epoch: int = MY_EPOCH,
                   topic_ids: dict[str, TopicId | None] | None = None) -> LeaderAndIsrRequest:
    return LeaderAndIsrRequest(CONTROLLER, controller_epoch, broker_epoch, states,
                               tuple((topic_ids or {}).items()))


def stop_replica(*states: tuple[int, int, bool], controller_epoch: int = 1, broker_epoch: int = MY_EPOCH,
                 topic: str = "t") -> StopReplicaRequest:
    """``states``: (partition, leader epoch, delete)."""
    return StopReplicaRequest(CONTROLLER, controller_epoch, broker_epoch,
                              tuple(StopReplicaPartitionState(topic, p, e, d) for p, e, d in states))


def um_state(partition: int = 0, leader: int = 1, leader_epoch: int = 0, replicas: tuple[int, ...] = (1, 2),
             isr: tuple[int, ...] | None = None, offline: tuple[int, ...] = (), topic: str = "t"
             ) -> UpdateMetadataPartitionState:
    return UpdateMetadataPartitionState(topic, partition, 1, leader, leader_epoch,
                                        replicas if isr is None else isr, 0, replicas, offline)


def update_metadata(*states: UpdateMetadataPartitionState, live: tuple[int, ...] = (1, 2, 3),
                    controller_epoch: int = 1, broker_epoch: int = MY_EPOCH, controller_id: int = CONTROLLER,
                    topic_ids: dict[str, TopicId | None] | None = None) -> UpdateMetadataRequest:
    return UpdateMetadataRequest(controller_id, controller_epoch, broker_epoch, states,
                                 tuple(broker(i) for i in live), tuple((topic_ids or {}).items()))
