"""What ``kill`` at the prompt says comes next. It said "`status` shows when a new controller takes over" after
killing any broker, and "its session stays until it times out", which on a real ZooKeeper it does not: there
`LocalCluster.crash_broker` expires the session at once."""

from __future__ import annotations

import random

from tests.integration.conftest import ClusterFactory

from zkcontroller.cluster.cluster_shell import ClusterShell
from zkcontroller.coordination.backend import CoordinationBackend
from zkcontroller.coordination.embedded_backend import EmbeddedBackend
from zkcontroller.runtime.clock import wall_clock_ms
from zkcontroller.zk.kafka_zk_client import KafkaZkClient


async def test_kill_says_whether_a_controller_change_or_a_leadership_move_follows_and_when(
    make_cluster: ClusterFactory, backend: CoordinationBackend
) -> None:
    cluster = await make_cluster([1, 2, 3])
    controller = (await cluster.wait_for_controller()).controller_id
    other = next(b for b in (1, 2, 3) if b != controller)
    lines: list[str] = []
    session = await backend.new_session()
    shell = ClusterShell(cluster, KafkaZkClient(session, wall_clock_ms), out=lines.append, rng=random.Random(1))
    try:
        await shell.run_command(f"kill {other}")
        await shell.run_command(f"kill {controller}")
    finally:
        await session.close()
    if isinstance(backend, EmbeddedBackend):
        when = "its session stays until it times out (6000 ms); then"
    else:
        when = ("its ZooKeeper session was expired (a real ZooKeeper client cannot be silenced without closing it), "
                "so")
    now = "" if isinstance(backend, EmbeddedBackend) else " now"
    assert lines == [
        f"kill {other}: done", f"{when} the controller moves its leadership (`describe` shows when){now}",
        f"kill {controller}: done", f"{when} another broker becomes controller (`status` shows when){now}",
    ]
