"""`broker_process.teardown_give_up`: when a broker process stopped by ``cluster --processes``' ``quit`` (SIGUSR1)
stops retrying its controlled shutdown. Only when retrying cannot help: the controller answered with partitions it
could not move, and ZooKeeper shows no other ISR replica of any of them on a registered broker. Otherwise it
retries, as Kafka does."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

from zkcontroller.cluster.broker_process import teardown_give_up
from zkcontroller.cluster.kafka_server import KafkaServer
from zkcontroller.coordination.errors import ZkError
from zkcontroller.model import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.inter_broker import ControlledShutdownResponse

T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)


class Zk:
    """What the rule reads of ZooKeeper: the registered brokers and partition states (None: no znode)."""

    def __init__(self, brokers: list[int], isr: dict[TopicPartition, tuple[int, ...] | None],
                 fail: bool = False) -> None:
        self.brokers, self.isr, self.fail = brokers, isr, fail

    async def get_sorted_broker_list(self) -> list[int]:
        if self.fail:
            raise ZkError("connection loss")
        return self.brokers

    async def get_topic_partition_state(self, tp: TopicPartition) -> LeaderIsrAndControllerEpoch | None:
        isr = self.isr[tp]
        return None if isr is None else LeaderIsrAndControllerEpoch(LeaderAndIsr(3, 1, isr), 1)


async def reason(zk: Any, response: ControlledShutdownResponse | None) -> str | None:
    server = cast(KafkaServer, SimpleNamespace(broker_id=3, zk=zk))
    return await teardown_give_up(server)(response)


async def test_gives_up_when_no_other_isr_replica_is_on_a_registered_broker() -> None:
    left = ControlledShutdownResponse(Errors.NONE, (T1, T0))
    zk = Zk([1, 3], {T0: (3,), T1: (3, 2)})  # broker 2 stopped; broker 1 runs but holds no replica of them
    assert await reason(zk, left) == "broker 3 still leads t-0, t-1, with no other ISR replica on a running broker"
    assert await reason(Zk([3], {}), left) == ("broker 3 is the last one running, so its leadership has nowhere "
                                               "to go")


async def test_retries_whenever_a_retry_may_help_or_the_answer_says_nothing() -> None:
    left = ControlledShutdownResponse(Errors.NONE, (T0, T1))
    assert await reason(Zk([1, 3], {T0: (3,), T1: (3, 1)}), left) is None  # broker 1 can take t-1
    assert await reason(Zk([1, 3], {T0: None, T1: (3,)}), left) is None  # t-0 deleted meanwhile
    assert await reason(Zk([1, 3], {}, fail=True), left) is None  # ZooKeeper does not answer
    assert await reason(Zk([3], {}), None) is None  # no answer: the controller may be moving
    assert await reason(Zk([3], {}), ControlledShutdownResponse(Errors.NOT_CONTROLLER, (T0,))) is None
    assert await reason(None, left) is None  # the broker never connected to ZooKeeper
