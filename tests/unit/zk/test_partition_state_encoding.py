"""`TopicPartitionStateZNode.encode_all` formats the state znodes directly: the bytes must be the JSON encoder's
(`dumps`, Jackson's compact form) for every leadership, whatever mix of ISRs a batch shares."""

from __future__ import annotations

import random

from zkcontroller.java_hash import java_string_hash, scala_immutable_hash_set_order
from zkcontroller.model import LeaderAndIsr
from zkcontroller.zk.json_fields import dumps
from zkcontroller.zk.znodes.topics import TopicPartitionStateZNode


def _reference(lai: LeaderAndIsr, controller_epoch: int) -> bytes:
    return dumps({"controller_epoch": controller_epoch, "leader": lai.leader, "version": 1,
                  "leader_epoch": lai.leader_epoch, "isr": list(lai.isr)})


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


def test_the_keys_are_in_kafkas_order() -> None:
    """ZkData's ``TopicPartitionStateZNode.encode`` builds a five-entry Scala ``Map``, a ``HashMap``, which Jackson
    writes in its trie's order: the spec's example znode (§1.2) shows it. We wrote version, leader, leader_epoch,
    controller_epoch, isr."""
    keys = ("version", "leader", "leader_epoch", "controller_epoch", "isr")  # as ZkData lists them
    assert tuple(scala_immutable_hash_set_order(keys, java_string_hash)) == TopicPartitionStateZNode.KEY_ORDER
    assert TopicPartitionStateZNode.encode_all([LeaderAndIsr(1, 3, (1, 2, 3), 0)], 5) == [
        b'{"controller_epoch":5,"leader":1,"version":1,"leader_epoch":3,"isr":[1,2,3]}']
    assert TopicPartitionStateZNode.encode_all([LeaderAndIsr(True, 3, (1,), 0)], 5) == [
        b'{"controller_epoch":5,"leader":true,"version":1,"leader_epoch":3,"isr":[1]}']  # the encoder's path
