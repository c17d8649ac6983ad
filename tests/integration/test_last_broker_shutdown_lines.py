"""The ERROR ``failed to change state for partition p from OnlinePartition to OnlinePartition`` that every cluster
stop logs is Kafka 2.8.2's own: the last broker running (the controller, stopped last) asks for its controlled
shutdown, ``doControlledShutdown`` runs ControlledShutdownPartitionLeaderElectionStrategy on each partition it
leads with more than one replica, no live, in-sync, not-shutting-down replica is left to lead, and
``electLeaderForPartitions`` logs each failure (``logFailedStateChange``), as real 2.8 logs show at a cluster's
stop. Pinned here line for line, so that nobody takes it for a fault of ours and "fixes" it away."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import wait_until
from tests.integration.conftest import ClusterFactory
from tests.integration.test_controller_cluster import create_topic, wait_for_states

from zkcontroller.cluster.logs import LogFiles
from zkcontroller.model import TopicPartition
from zkcontroller.zk.kafka_zk_client import KafkaZkClient


async def test_the_last_brokers_controlled_shutdown_logs_kafkas_failed_elections(
    make_cluster: ClusterFactory, admin: KafkaZkClient, tmp_path: Path
) -> None:
    cluster = await make_cluster([1, 2])
    controller = await cluster.wait_for_controller()
    me = controller.controller_id
    other = 3 - me
    await create_topic(admin, "two", {0: [me, other]})
    await create_topic(admin, "one", {0: [me]})  # a single replica: doControlledShutdown leaves it alone
    for topic in ("two", "one"):
        await wait_for_states(admin, topic, 1, lambda s: s[0].leader_and_isr.leader == me, f"{topic}-0 led by {me}")
    await cluster.stop_broker(other)
    await wait_until(lambda: other not in controller.context.live_broker_ids, what=f"broker {other} gone")
    assert controller.context.partition_leader_and_isr(TopicPartition("two", 0)).isr == (me,)
    epoch = controller.context.epoch  # the context is cleared when the controller resigns at its broker's stop

    logs = LogFiles(tmp_path)
    try:
        await cluster.shutdown()  # only the controller's broker is left
    finally:
        logs.close()

    controller_log = (tmp_path / "controller.log").read_text()
    assert f"[Controller id={me}] Shutting down broker {me} (kafka.controller.KafkaController)" in controller_log
    lines = (tmp_path / "state-change.log").read_text().splitlines()
    at = [i for i, line in enumerate(lines) if " ERROR " in line]
    assert [lines[i].split("] ", 1)[1] for i in at] == [  # after the timestamp
        f"ERROR [Controller id={me} epoch={epoch}] Controller {me} epoch {epoch} failed to change state for "
        "partition two-0 from OnlinePartition to OnlinePartition (state.change.logger)"]
    # the throwable's line, as log4j prints it (a Java stack trace would follow; no Python traceback does)
    assert lines[at[0] + 1] == ("kafka.common.StateChangeFailedException: Failed to elect leader for partition "
                                "two-0 under strategy ControlledShutdownPartitionLeaderElectionStrategy")
    assert all(line.startswith("[") for line in lines[at[0] + 2:])
