"""``zkcontroller demo``: the README's main job, a narrated cluster run.

Three brokers start, each a controller candidate with its own session; one wins ``/controller`` with epoch 1.
Topics are created the way Kafka's tools create them and come online. The controller's broker is then stopped:
another broker takes over with epoch 2, reloads the context from the store, and moves leadership off the
stopped broker. A broker's session is expired (it re-registers with a new broker epoch), the stopped broker
returns, and the logs are left for ``zkcontroller analyze``. The same `ClusterShell` commands a user types
at ``zkcontroller cluster`` drive it, on the embedded store or a real ZooKeeper.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from rich.console import Console

from zkcontroller.cluster.cluster_shell import ClusterShell
from zkcontroller.cluster.local_cluster import LocalCluster
from zkcontroller.cluster.logs import LogFiles
from zkcontroller.controller.config import ControllerConfig
from zkcontroller.coordination.backend import CoordinationBackend
from zkcontroller.runtime.clock import wall_clock_ms
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

console = Console(highlight=False, soft_wrap=True)


async def run_demo(backend: CoordinationBackend, broker_ids: list[int], log_dir: Path | None = None) -> Path:
    log_dir = log_dir or Path(tempfile.mkdtemp(prefix="zkcontroller-demo-"))
    logs = LogFiles(log_dir)
    cluster = LocalCluster(
        backend, broker_ids, wall_clock_ms, event_log=logs.event_log("demo", wall_clock_ms), session_timeout_ms=6000,
        # the failover story: leadership moves when the controller's broker is gone, not before nor after
        controller_config=ControllerConfig(broker_id=-1, controlled_shutdown_enable=False,
                                           auto_leader_rebalance_enable=False),
    )
    admin_session = await backend.new_session()
    shell = ClusterShell(cluster, KafkaZkClient(admin_session, wall_clock_ms), out=console.print)
    try:
        await cluster.start()
        first = await cluster.wait_for_controller()
        console.print(
            f"[bold]{len(broker_ids)} brokers registered; broker {first.controller_id} won the election "
            f"with epoch {first.context.epoch}[/]"
        )
        survivor = next(b for b in broker_ids if b != first.controller_id)
        rf = min(3, len(broker_ids))
        steps = [
            ("Create two topics; the controller brings their partitions online", f"create orders 6 {rf}"),
            (None, f"create payments 3 {min(2, rf)}"),
            (None, "describe"),
            (
                f"Stop broker {first.controller_id}, the controller: another broker takes over",
                f"stop {first.controller_id}",
            ),
            ("Leadership has moved off the stopped broker", "describe"),
            (
                f"Expire broker {survivor}'s ZooKeeper session: it re-registers with a new broker epoch",
                f"expire {survivor}",
            ),
            (f"Bring broker {first.controller_id} back", f"start {first.controller_id}"),
            (None, "status"),
        ]
        for title, command in steps:
            if title:
                console.print(f"\n[bold cyan]== {title}[/]")
            console.print(f"[dim]> {command}[/]")
            await shell.run_command(command)
    finally:
        await cluster.shutdown()
        await admin_session.close()
        await backend.close()
        logs.close()
    console.print(f"\nLogs (Kafka's state-change.log and controller.log, and events.jsonl) are in {log_dir}")
    console.print(f"Analyse them with: uv run zkcontroller analyze {log_dir} --out {log_dir}/analysis")
    return log_dir
