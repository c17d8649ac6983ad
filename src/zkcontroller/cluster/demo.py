"""``zkcontroller demo``: the README's main job, a narrated cluster run.

Three brokers start, each a controller candidate with its own session; one wins ``/controller`` with epoch 1. Topics are
created the way Kafka's tools create them and come online. The controller's broker is then stopped as Kafka stops a
broker, with a controlled shutdown: it asks the controller (itself) to move its leadership to the other replicas first
(the analysis lists it in ``controlled_shutdowns``; with controlled shutdown off, leadership moved only once the broker
was gone, as after a crash); then another broker takes over with epoch 2 and reloads the context from the store. The new
controller's session is expired: it re-registers with a new broker epoch and a new election follows (epoch 3). The
stopped broker returns and heals the cluster as Kafka's does: its replicas fetch what they missed and rejoin every ISR,
and a preferred-replica election gives leadership back. The logs are left for ``zkcontroller analyze``,
the event log naming the cluster by its id (``/cluster/id``) as ``zkcontroller cluster`` does. The same
`ClusterShell` commands a user types at ``zkcontroller cluster`` drive it, on the embedded store or a real ZooKeeper.
"""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path

from rich.console import Console

from zkcontroller.cluster.cluster_shell import ClusterShell, event_log_cluster, listener_lines
from zkcontroller.cluster.listener import ListenerPorts
from zkcontroller.cluster.local_cluster import LocalCluster
from zkcontroller.cluster.logs import LogFiles
from zkcontroller.cluster.partition_wait import PartitionCondition, wait_for_partitions
from zkcontroller.controller.config import ControllerConfig
from zkcontroller.coordination.backend import CoordinationBackend
from zkcontroller.model import LeaderIsrAndControllerEpoch, ReplicaAssignment
from zkcontroller.runtime.clock import wall_clock_ms
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

console = Console(highlight=False, soft_wrap=True)
HEAL_TIMEOUT_S = 60.0
"""A bound on each healing wait: ISR expansion needs a few fetch rounds, elections one controller event."""

async def _wait_until_every_partition(admin: KafkaZkClient, condition: PartitionCondition, what: str) -> None:
    """Wait until every partition satisfies ``condition`` (bounded); say how long it took."""
    waited = await wait_for_partitions(admin, condition, HEAL_TIMEOUT_S)
    if not waited.met:
        raise TimeoutError(f"{what}: not within {HEAL_TIMEOUT_S:.0f} s")
    console.print(f"[green]{what} after {waited.elapsed_s:.1f} s[/]")


def _full_isr(assignment: ReplicaAssignment, state: LeaderIsrAndControllerEpoch) -> bool:
    return set(state.leader_and_isr.isr) == set(assignment.replicas)


def _preferred_leader(assignment: ReplicaAssignment, state: LeaderIsrAndControllerEpoch) -> bool:
    return state.leader_and_isr.leader == assignment.replicas[0]


async def run_demo(backend: CoordinationBackend, broker_ids: list[int], log_dir: Path | None = None,
                   listeners: ListenerPorts | None = None) -> Path:
    """The narrated run; with ``listeners`` the brokers also answer Kafka's wire protocol (`cluster.listener`)."""
    log_dir = log_dir or Path(tempfile.mkdtemp(prefix="zkcontroller-demo-"))
    async with contextlib.AsyncExitStack() as resources:  # closed in reverse order, whatever fails
        logs = LogFiles(log_dir)
        resources.callback(logs.close)  # it sets the loggers' levels and handlers process-wide
        resources.push_async_callback(backend.close)
        admin_session = await backend.new_session()  # raises when ZooKeeper cannot be reached
        resources.push_async_callback(admin_session.close)
        admin = KafkaZkClient(admin_session, wall_clock_ms)
        # the event log names the cluster by its id, as `zkcontroller cluster` does: a fixed "demo" made
        # `analyze` read two runs' log directories as one cluster (a false epoch reset, tenures across both)
        cluster_id = await event_log_cluster(admin)
        cluster = LocalCluster(
            backend, broker_ids, wall_clock_ms, event_log=logs.event_log(cluster_id, wall_clock_ms),
            session_timeout_ms=6000,
            # controlled shutdown stays on (Kafka's default): "stop" is an orderly stop, and `analyze` lists it as
            # one; leadership comes back only by the narrated preferred-replica election, not before
            controller_config=ControllerConfig(broker_id=-1, auto_leader_rebalance_enable=False),
            listeners=listeners,
        )
        resources.push_async_callback(cluster.shutdown)
        shell = ClusterShell(cluster, admin, out=console.print)
        await cluster.start()
        first = await cluster.wait_for_controller()
        console.print(
            f"[bold]{len(broker_ids)} brokers registered; broker {first.controller_id} won the election "
            f"with epoch {first.context.epoch}[/]"
        )
        for line in listener_lines(cluster):
            console.print(line)
        rf = min(3, len(broker_ids))
        await _run(shell, [
            ("Create two topics; the controller brings their partitions online", f"create orders 6 {rf}"),
            (None, f"create payments 3 {min(2, rf)}"),
            ("Produce to every partition's leader; the followers fetch the records", "produce orders 6000"),
            (None, "produce payments 3000"),
            (None, "describe"),
            (
                f"Stop broker {first.controller_id}, the controller, with a controlled shutdown: it moves its "
                "leadership to the other replicas, then another broker takes over as controller",
                f"stop {first.controller_id}",
            ),
            ("Leadership is off the stopped broker", "describe"),
        ])
        # The new controller's session is the one to expire (the run's third tenure, which `analyze` finds). The
        # title named a broker chosen before the failover and said only that it re-registers, so the failover
        # its expiry caused came unannounced.
        second = await cluster.wait_for_controller(exclude=first.controller_id, min_epoch=first.context.epoch + 1)
        expired, epoch = second.controller_id, second.context.epoch
        await _run(shell, [
            (
                f"Expire broker {expired}'s ZooKeeper session, the controller's now: it resigns and re-registers "
                f"with a new broker epoch, and a new election makes epoch {epoch + 1}",
                f"expire {expired}",
            ),
            (f"Bring broker {first.controller_id} back", f"start {first.controller_id}"),
        ])
        console.print(f"\n[bold cyan]== Broker {first.controller_id} fetches what it missed and rejoins every ISR[/]")
        await _wait_until_every_partition(shell.admin, _full_isr, "every ISR holds all its replicas")
        await _run(shell, [(None, "describe")])
        console.print("\n[bold cyan]== A preferred-replica election gives leadership back to the first replicas[/]")
        await _run(shell, [(None, "elect")])
        await _wait_until_every_partition(shell.admin, _preferred_leader,
                                          "every partition is led by its preferred replica")
        await _run(shell, [(None, "describe"), (None, "status")])
    console.print(f"\nLogs (Kafka's state-change.log, controller.log and server.log, and events.jsonl) are in "
                  f"{log_dir}")
    console.print(f"Analyse them with: uv run zkcontroller analyze {log_dir} --out {log_dir}/analysis "
                  f"(the report names the cluster by its id, {cluster_id})")
    return log_dir


class DemoStepFailed(Exception):
    """A narrated step's command printed an error: the story after it would not be true, so the run stops
    (it carried on and exited 0)."""


async def _run(shell: ClusterShell, steps: list[tuple[str | None, str]]) -> None:
    for title, command in steps:
        if title:
            console.print(f"\n[bold cyan]== {title}[/]")
        console.print(f"[dim]> {command}[/]")
        errors = [line for line in await _said(shell, command) if line.startswith("error:")]
        if errors:
            raise DemoStepFailed(f"demo step `{command}` failed: {errors[0].removeprefix('error:').strip()}")


async def _said(shell: ClusterShell, command: str) -> list[str]:
    """Run one prompt command, printing its lines as the prompt does, and return them."""
    said: list[str] = []
    print_line = shell.out

    def out(line: str) -> None:
        said.append(str(line))
        print_line(line)

    shell.out = out
    try:
        await shell.run_command(command)
    finally:
        shell.out = print_line
    return said
