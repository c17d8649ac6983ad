"""`Multi` writes the bytes kazoo's own ``Transaction`` writes for the same ops, and reads ZooKeeper's
answers (success, rolled back, failed) into the same results kazoo's path gave. The server side is covered
by the store contract tests (`tests/contract/test_store_multi.py`) against a real ZooKeeper."""

from __future__ import annotations

import struct

import pytest
from kazoo.client import KazooClient
from kazoo.protocol.serialization import Transaction
from kazoo.security import OPEN_ACL_UNSAFE, make_digest_acl

from zkcontroller.coordination.api import (
    CheckOp,
    CheckResult,
    CreateMode,
    CreateOp,
    CreateResult,
    DeleteOp,
    DeleteResult,
    ErrorResult,
    SetDataOp,
    SetDataResult,
    Stat,
)
from zkcontroller.coordination.errors import ErrorCode
from zkcontroller.coordination.kazoo_multi_write import Multi, encode_acl, multi_results

OPS = [
    CheckOp("/controller_epoch", 4),
    CreateOp("/brokers/topics/t/partitions/0/state", b'{"leader":1}', CreateMode.PERSISTENT),
    CreateOp("/controller", b"", CreateMode.EPHEMERAL),
    CreateOp("/isr_change_notification/isr_change_", b"x", CreateMode.PERSISTENT_SEQUENTIAL),
    CreateOp("/e-", b"y", CreateMode.EPHEMERAL_SEQUENTIAL),
    SetDataOp("/brokers/topics/t/partitions/1/state", b'{"leader":2}', 7),
    SetDataOp("/config/topics/caf\u00e9", b"", -1),
    DeleteOp("/admin/delete_topics/t", -1),
    DeleteOp("/", 3),
]


def _kazoo_bytes(client: KazooClient, ops: list) -> bytes:
    txn = client.transaction()
    for op in ops:
        if isinstance(op, CreateOp):
            txn.create(op.path, op.data, ephemeral=op.mode.ephemeral, sequence=op.mode.sequential)
        elif isinstance(op, DeleteOp):
            txn.delete(op.path, op.version)
        elif isinstance(op, SetDataOp):
            txn.set_data(op.path, op.data, op.version)
        else:
            txn.check(op.path, op.version)
    return bytes(Transaction(txn.operations).serialize())


@pytest.mark.parametrize("chroot", ["", "/kafka", "/a/b"])
def test_serializes_as_kazoos_transaction(chroot: str) -> None:
    client = KazooClient(hosts=f"127.0.0.1:1{chroot}")
    assert client.chroot == chroot
    ours = Multi(OPS, client.chroot, encode_acl(client.default_acl or OPEN_ACL_UNSAFE)).serialize()
    assert ours == _kazoo_bytes(client, OPS)


def test_creates_carry_the_clients_default_acl() -> None:
    acl = [make_digest_acl("kafka", "secret", all=True)]
    client = KazooClient(hosts="127.0.0.1:1", default_acl=acl)
    ops = [CreateOp("/secured", b"v")]
    assert Multi(ops, "", encode_acl(acl)).serialize() == _kazoo_bytes(client, ops)
    assert Multi(ops, "", encode_acl(OPEN_ACL_UNSAFE)).serialize() != _kazoo_bytes(client, ops)


def _header(kind: int, done: bool = False, err: int = -1) -> bytes:
    return struct.pack("!iBi", kind, done, err)


STAT = (11, 12, 1000, 2000, 8, 0, 0, 0, 12, 0, 11)


def test_reads_a_successful_answer() -> None:
    path = b"/isr_change_notification/isr_change_0000000005"
    answer = (_header(13) + _header(1) + struct.pack("!i", len(path)) + path
              + _header(5) + struct.pack("!qqqqiiiqiiq", *STAT) + _header(2) + _header(-1, True, -1))
    raw = Multi.deserialize(answer, 0)
    ops = [CheckOp("/a", 0), CreateOp("/isr_change_notification/isr_change_", b"",
                                      CreateMode.PERSISTENT_SEQUENTIAL), SetDataOp("/b", b"", 7), DeleteOp("/c")]
    assert multi_results(ops, raw) == (
        CheckResult(), CreateResult(path.decode()), SetDataResult(Stat(*STAT)), DeleteResult())


def test_reads_a_failed_answer_op_by_op() -> None:
    """ZooKeeper answers a failed multi with an error per op: OK (rolled back) before the failing op, its
    code, RUNTIME_INCONSISTENCY after it."""
    answer = b"".join(_header(-1, False, code) + struct.pack("!i", code) for code in (0, -103, -2))
    answer += _header(-1, True, -1)
    ops = [CheckOp("/controller_epoch", 3), SetDataOp("/s", b"", 1), DeleteOp("/d")]
    assert multi_results(ops, Multi.deserialize(answer, 0)) == (
        ErrorResult(ErrorCode.OK), ErrorResult(ErrorCode.BAD_VERSION), ErrorResult(ErrorCode.RUNTIME_INCONSISTENCY))


def test_an_unknown_error_code_is_a_system_error_and_a_short_answer_is_refused() -> None:
    answer = _header(-1, False, -4242) + struct.pack("!i", -4242) + _header(-1, True, -1)
    assert multi_results([CheckOp("/a", 0)], Multi.deserialize(answer, 0)) == (
        ErrorResult(ErrorCode.SYSTEM_ERROR),)
    with pytest.raises(ValueError, match="1 results for 2 ops"):
        multi_results([CheckOp("/a", 0), CheckOp("/b", 0)], Multi.deserialize(answer, 0))
    with pytest.raises(ValueError, match="unexpected op type 4"):
        Multi.deserialize(_header(4) + _header(-1, True, -1), 0)
