"""`TopicPartitionStateZNode.encode_all` formats the state znodes directly: the bytes must be the JSON encoder's
(`dumps`, Jackson's compact form) for every leadership, whatever mix of ISRs a batch shares."""

from __future__ import annotations

import random

from zkcontroller.model import LeaderAndIsr
from zkcontroller.zk.json_fields import dumps
from zkcontroller.zk.znodes.topics import TopicPartitionStateZNode


def _reference(lai: LeaderAndIsr, controller_epoch: int) -> bytes:
    return dumps({"version": 1, "leader": lai.leader, "leader_epoch": lai.leader_epoch,
                  "controller_epoch": controller_epoch, "isr": list(lai.isr)})


def test_encode_all_writes_the_encoders_bytes() -> None:
    rng = random.Random(15)
    values = [-1, 0, 1, 7, 2**31 - 1, 2**63 - 1, 2**64 + 5, -(2**70)]
    lais = [LeaderAndIsr(rng.choice(values), rng.choice(values), tuple(rng.sample(values, rng.randint(0, 3))),
                         rng.randint(0, 9))
            for _ in range(2000)]
    for epoch in (0, 5, 2**40):
        assert TopicPartitionStateZNode.encode_all(lais, epoch) == [_reference(lai, epoch) for lai in lais]


def test_non_int_fields_take_the_encoder() -> None:
    """A bool is an int to Python but prints as True: JSON says true."""
    lais = [LeaderAndIsr(True, 0, (1, 2), 0), LeaderAndIsr(1, False, (1, 2), 0), LeaderAndIsr(1, 0, (True, 3), 0),
            LeaderAndIsr(1, 0, (1, 2), 0)]
    assert TopicPartitionStateZNode.encode_all(lais, 3) == [_reference(lai, 3) for lai in lais]
    assert TopicPartitionStateZNode.encode_all(lais[3:], True) == [_reference(lais[3], True)]  # type: ignore[arg-type]
