"""``quit`` at the ``cluster --processes`` prompt stops the broker processes as an operator stops a cluster cleanly:
one at a time, the controller last, so every broker's controlled shutdown ends as it should and no leader is
elected uncleanly. It sent SIGTERM to all at once: the controller then excluded every broker as shutting down, no
leadership could move, and each controlled shutdown retried and ended "as all the controlled shutdown attempts
failed" (what `zkcontroller analyze` then reported for a plain quit)."""

from __future__ import annotations

import asyncio
import random
import re
from pathlib import Path

import pytest
from tests.e2e.process_clusters import registered_zk, started_process_cluster
from tests.helpers import wait_until

from zkcontroller.admin.topics import TopicAdmin
from zkcontroller.model import TopicPartition

pytestmark = [pytest.mark.zookeeper, pytest.mark.timeout(180)]

OUTCOME = re.compile(r"\[KafkaServer id=\d+\] (Controlled shutdown succeeded"
                     r"|Not retrying controlled shutdown \(.*?\)(?=; )"
                     r"|Proceeding to do an unclean shutdown as all the controlled shutdown attempts failed)")


def shutdown_outcomes(log: Path) -> list[str]:
    """A broker log's controlled-shutdown outcome lines, each as its words after the broker's prefix."""
    return [m.group(1) for m in OUTCOME.finditer(log.read_text(errors="replace"))]


async def quit_after_topics(directory: Path, pair: bool) -> tuple[int, list[int], list[str], dict[int, Path]]:
    """Three brokers with topic t (three partitions, a replica on each broker), and with ``pair`` topic ``pair``
    (one partition on the two brokers that are not the controller, the lower id leading); stopped as ``quit``
    stops them once every partition is led with its full ISR. Returns the controller, the others, what the stop
    said and each broker's log."""
    with started_process_cluster(directory, [1, 2, 3], session_timeout_ms=30000) as cluster:
        async with registered_zk(cluster) as zk:
            controller = await zk.get_controller_id()
            assert controller is not None
            others = [b for b in (1, 2, 3) if b != controller]
            admin = TopicAdmin(zk, random.Random(1))
            await admin.create_topic("t", 3, 3)
            expected = {TopicPartition("t", p): 3 for p in range(3)}
            if pair:
                await admin.create_topic_with_assignment("pair", {0: others})
                expected[TopicPartition("pair", 0)] = 2

            async def all_led_with_full_isr() -> bool:
                for tp, replicas in expected.items():
                    state = await zk.get_topic_partition_state(tp)
                    if state is None or state.leader_and_isr.leader < 0 or len(state.leader_and_isr.isr) < replicas:
                        return False
                return True

            await wait_until(all_led_with_full_isr, timeout_s=60, what="every partition led, with its full ISR")
            assert await zk.get_controller_id() == controller
        said: list[str] = []
        await asyncio.to_thread(cluster.stop, said.append)
    return controller, others, said, {b: cluster.brokers[b].log for b in (1, 2, 3)}


def check_stopped_in_order_cleanly(controller: int, others: list[int], said: list[str],
                                   logs: dict[int, Path]) -> None:
    """The non-controllers by id, then the controller, each shut down completely; no unclean election."""
    assert [line.split(" (pid")[0] for line in said] == [*(f"stopping broker {b}" for b in others),
                                                         f"stopping broker {controller}", "all brokers stopped"]
    assert said[2].endswith(", the controller, last"), said
    for b, log in logs.items():
        text = log.read_text(errors="replace")
        assert "Unclean leader election" not in text, b
        assert text.rstrip().endswith("shut down completed (kafka.server.KafkaServer)"), b


async def test_quit_stops_brokers_one_at_a_time_controller_last_with_clean_controlled_shutdowns(
        tmp_path: Path) -> None:
    """A topic with a replica on each broker: the two others' controlled shutdowns succeed (each hands its
    leadership to a broker still running), and the controller, stopped last, gives up at once as the last broker
    running (its leadership has nowhere to go) instead of retrying; no election is unclean."""
    controller, others, said, logs = await quit_after_topics(tmp_path / "cluster", pair=False)
    for b in others:
        assert shutdown_outcomes(logs[b]) == ["Controlled shutdown succeeded"], b
    assert shutdown_outcomes(logs[controller]) == [
        f"Not retrying controlled shutdown (broker {controller} is the last one running, so its leadership has "
        "nowhere to go)"]
    check_stopped_in_order_cleanly(controller, others, said, logs)


async def test_quit_gives_up_at_once_for_a_partition_whose_partners_have_stopped(tmp_path: Path) -> None:
    """The second broker stopped still leads ``pair``'s partition, whose other replica has stopped: it says why it
    does not retry (Kafka's retries took 10 s and ended "all the controlled shutdown attempts failed")."""
    controller, others, said, logs = await quit_after_topics(tmp_path / "cluster", pair=True)
    first, second = others
    assert shutdown_outcomes(logs[first]) == ["Controlled shutdown succeeded"]
    assert shutdown_outcomes(logs[second]) == [
        f"Not retrying controlled shutdown (broker {second} still leads pair-0, with no other ISR replica on a "
        "running broker)"]
    assert shutdown_outcomes(logs[controller]) == [
        f"Not retrying controlled shutdown (broker {controller} is the last one running, so its leadership has "
        "nowhere to go)"]
    check_stopped_in_order_cleanly(controller, others, said, logs)
