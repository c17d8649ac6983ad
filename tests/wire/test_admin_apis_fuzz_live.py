"""Mutated CreatePartitions, ElectLeaders and reassignment frames against the real handlers of a running
in-process cluster (the stub-handler fuzz in `test_admin_apis_fuzz` exercises decoding only): each is answered or
closes the connection, never another exception, and afterwards the controller is still active and answers a valid
request. Mutations are seeded, so a failure replays."""

from __future__ import annotations

import asyncio
import random
import struct

import pytest

from zkcontroller.broker.kafka_apis import CloseConnection

from .admin_fixture import (
    Cluster,
    admin_cluster_fixture,  # noqa: F401
    controller,
    create,
)
from .test_admin_apis_fuzz import VALID

pytestmark = pytest.mark.timeout(300)


def mutate(rng: random.Random, payload: bytes) -> bytes:
    """1–4 flips, truncations, insertions or planted lengths after the 8-byte header (key, version, correlation)."""
    out = bytearray(payload)
    header = 8
    for _ in range(rng.randint(1, 4)):
        kind = rng.choice(["flip", "truncate", "insert", "length"])
        if kind in ("flip", "truncate") and len(out) <= header:
            continue
        if kind == "flip":
            out[rng.randint(header, len(out) - 1)] = rng.randint(0, 255)
        elif kind == "truncate":
            del out[rng.randint(header, len(out) - 1):]
        elif kind == "insert":
            i = rng.randint(header, len(out))
            out[i:i] = rng.randbytes(rng.randint(1, 8))
        elif len(out) >= header + 4:
            i = rng.randint(header, len(out) - 4)
            out[i:i + 4] = struct.pack(">i", rng.choice([-2, -1, 0, 3, 0x7FFFFFFF, 1 << 20]))
    return bytes(out)


@pytest.mark.parametrize("seed", [20261127, 1, 2, 3])
async def test_mutated_admin_requests_never_break_the_controllers_broker(admin_cluster: Cluster, seed: int) -> None:
    cluster, zk = admin_cluster
    await create(cluster, zk, "orders", {0: [1, 2], 1: [2, 3]})
    active = controller(cluster)
    apis = cluster.listeners[active.broker_id].apis
    rng = random.Random(seed)
    answered = closed = 0
    for _ in range(300):
        payload = mutate(rng, rng.choice(VALID))
        try:
            # mutated timeouts may be long: a request that waits is left to finish on its own, bounded here
            await asyncio.wait_for(apis.handle(payload), 20)
            answered += 1
        except CloseConnection:
            closed += 1
    assert answered and closed
    assert active.controller is not None and active.controller.is_active
    for payload in VALID:
        assert await asyncio.wait_for(apis.handle(payload), 20) is not None
