"""Brokers as real processes on Kafka's wire protocol against a real ZooKeeper, seen by Kafka's own tools.

One cluster of three `zkcontroller broker` processes serves the whole module; destructive steps come last.
Every wait is on a condition with a bound. Sessions are long (30 s): a broker starved for a few seconds on a loaded
machine must not lose its session mid-test. Only the broker a test means to lose its session (killed, or paused
past it) runs with a short one (2 s), so that its loss is noticed fast.
"""

from __future__ import annotations

import asyncio
import json
import random
import shutil
import signal
import subprocess
import urllib.request
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from tests.e2e.process_clusters import (
    registered_zk,
    session_timeout_ms,
    start_broker_with_session,
    started_process_cluster,
)
from tests.helpers import QUICK_SHUTDOWN_RETRIES, require_tool, tool_missing, wait_until

from zkcontroller.admin.topics import TopicAdmin
from zkcontroller.cluster.process_cluster import ProcessCluster, wait_registered
from zkcontroller.coordination.connect import make_backend
from zkcontroller.model import Broker, EndPoint, TopicPartition
from zkcontroller.protocol.control_requests import (
    Errors,
    LeaderAndIsrPartitionState,
    LeaderAndIsrRequest,
    StopReplicaPartitionState,
    StopReplicaRequest,
    UpdateMetadataRequest,
)
from zkcontroller.runtime.clock import wall_clock_ms
from zkcontroller.runtime.runtime import AsyncioRuntime
from zkcontroller.runtime.tcp_transport import TcpTransport
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

pytestmark = [pytest.mark.zookeeper, pytest.mark.timeout(240)]

SESSION_TIMEOUT_MS = 30000
"""Every broker's session, unless a test means the broker to lose it."""
LOST_SESSION_TIMEOUT_MS = 2000
"""The session of the one broker a test kills or pauses, which the test waits to see expire."""
KCAT = shutil.which("kcat")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProcessCluster]:
    if KCAT is None:
        tool_missing("kcat", "not on PATH (the wire end-to-end tests need it)")
    with started_process_cluster(tmp_path_factory.mktemp("processes"), [1, 2, 3],
                                 session_timeout_ms=SESSION_TIMEOUT_MS, racks={1: "r1", 2: "r2", 3: "r1"}) as c:
        yield c


@pytest.fixture
async def zk(cluster: ProcessCluster) -> AsyncIterator[KafkaZkClient]:
    async with registered_zk(cluster) as client:
        yield client


def kcat(broker: str) -> dict | None:
    """``kcat -L -J`` from one broker; None if it could not get metadata."""
    assert KCAT is not None, "kcat is not installed (scripts/setup.sh --test installs it)"
    done = subprocess.run([KCAT, "-L", "-J", "-b", broker, "-m", "3"], capture_output=True, text=True, timeout=20)
    if done.returncode != 0 or not done.stdout.strip():
        return None
    return json.loads(done.stdout)


def kcat_partitions(md: dict) -> dict[TopicPartition, tuple[int, list[int], list[int]]]:
    return {TopicPartition(t["topic"], p["partition"]): (p["leader"], [r["id"] for r in p["replicas"]],
                                                          [r["id"] for r in p["isrs"]])
            for t in md["topics"] for p in t["partitions"]}


async def zk_partitions(zk: KafkaZkClient, topics: list[str]) -> dict[TopicPartition, tuple[int, list[int], list[int]]]:
    assignments = await zk.get_topic_assignments(topics)
    partitions = [tp for a in assignments.values.values() for tp in a.assignment]
    states = (await zk.get_topic_partition_states(partitions)).values
    replicas = {tp: list(r.replicas) for a in assignments.values.values() for tp, r in a.assignment.items()}
    return {tp: (s.leader_and_isr.leader, replicas[tp], list(s.leader_and_isr.isr)) for tp, s in states.items()}


async def wait_for_kcat(broker: str, predicate, what: str, timeout_s: float = 30.0) -> dict:
    seen: list[dict] = []

    async def check() -> bool:
        md = await asyncio.to_thread(kcat, broker)
        if md is None or not predicate(md):
            return False
        seen.append(md)
        return True

    await wait_until(check, timeout_s=timeout_s, what=what, poll_s=0.2)
    return seen[-1]


async def create_topic(zk: KafkaZkClient, name: str, partitions: int, rf: int) -> None:
    import random

    await TopicAdmin(zk, random.Random(7)).create_topic(name, partitions, rf)


def _all_led(md: dict, topic: str, n: int, live: set[int]) -> bool:
    parts = [p for t in md["topics"] if t["topic"] == topic for p in t["partitions"]]
    return len(parts) == n and all(p["leader"] in live for p in parts)


async def ensure_orders(cluster: ProcessCluster, zk: KafkaZkClient) -> None:
    """The module's topic, led on every partition, whichever tests ran before (each test can run alone)."""
    if "orders" not in await zk.get_all_topics_in_cluster():
        await create_topic(zk, "orders", 6, 2)
    await wait_for_kcat(cluster.bootstrap.split(",")[0], lambda m: _all_led(m, "orders", 6, {1, 2, 3}),
                        "orders led on every partition")


# ---------------------------------------------------------------------------------------------- what tools see

async def test_kcat_lists_brokers_topics_and_partitions_as_zookeeper_holds(cluster, zk):
    await ensure_orders(cluster, zk)  # created here unless a test before made it (it raised "already exists")
    addr = cluster.bootstrap.split(",")[1]
    md = await wait_for_kcat(addr, lambda m: _all_led(m, "orders", 6, {1, 2, 3}), "orders led on every partition")
    assert sorted(b["id"] for b in md["brokers"]) == [1, 2, 3]
    assert md["controllerid"] == await zk.get_controller_id()

    async def as_zookeeper_holds() -> bool:
        """ZooKeeper read again each time: after the module's broker kills and restarts (when this test runs
        after them) an ISR still grows, and a view read once went stale."""
        expected = await zk_partitions(zk, ["orders"])
        md = await asyncio.to_thread(kcat, addr)
        return md is not None and {tp: p for tp, p in kcat_partitions(md).items() if tp.topic == "orders"} == expected
    await wait_until(as_zookeeper_holds, timeout_s=30, what="kcat to show ZooKeeper's ISR", poll_s=0.2)


async def test_kafka_python_and_confluent_admin_clients_describe_the_cluster(cluster, zk):
    from confluent_kafka.admin import AdminClient
    from kafka.admin import KafkaAdminClient

    await ensure_orders(cluster, zk)  # the first test's topic: run alone, this test makes it
    controller = await zk.get_controller_id()
    expected = await zk_partitions(zk, ["orders"])
    for addr in cluster.bootstrap.split(","):  # the clients ask any broker: each has ZooKeeper's view first
        await wait_for_kcat(addr, lambda m: {tp: p for tp, p in kcat_partitions(m).items() if tp.topic == "orders"}
                            == expected, f"kcat at {addr} to show ZooKeeper's orders partitions")

    def kafka_python() -> tuple[dict, list]:
        client = KafkaAdminClient(bootstrap_servers=cluster.bootstrap, request_timeout_ms=10000)
        try:
            return client.describe_cluster(), client.describe_topics(["orders"])
        finally:
            client.close()

    described, topics = await asyncio.to_thread(kafka_python)
    assert described["controller_id"] == controller
    assert {(b["broker_id"], b["rack"]) for b in described["brokers"]} == {(1, "r1"), (2, "r2"), (3, "r1")}
    got = {TopicPartition("orders", p["partition_index"]): (p["leader_id"], p["replica_nodes"], p["isr_nodes"])
           for p in topics[0]["partitions"]}
    assert got == expected

    def confluent() -> tuple[int, dict]:
        client = AdminClient({"bootstrap.servers": cluster.bootstrap})
        result = client.describe_cluster().result(timeout=10)
        md = client.list_topics(timeout=10)
        parts = {TopicPartition("orders", p): (x.leader, list(x.replicas), list(x.isrs))
                 for p, x in md.topics["orders"].partitions.items()}
        return result.controller.id, parts

    controller_id, parts = await asyncio.to_thread(confluent)
    assert controller_id == controller and parts == expected


async def test_admin_clients_create_topics_on_the_controller(cluster, zk):
    from confluent_kafka.admin import AdminClient, NewTopic
    from kafka.admin import KafkaAdminClient
    from kafka.admin import NewTopic as KafkaPythonNewTopic

    def kafka_python() -> None:
        client = KafkaAdminClient(bootstrap_servers=cluster.bootstrap, request_timeout_ms=10000)
        try:
            client.create_topics([KafkaPythonNewTopic("made-by-kafka-python", 3, 2)])
        finally:
            client.close()

    def confluent() -> None:
        client = AdminClient({"bootstrap.servers": cluster.bootstrap})
        client.create_topics([NewTopic("made-by-confluent", 2, 3)])["made-by-confluent"].result(timeout=20)

    await asyncio.to_thread(kafka_python)
    await asyncio.to_thread(confluent)
    addr = cluster.bootstrap.split(",")[0]
    await wait_for_kcat(addr, lambda m: _all_led(m, "made-by-kafka-python", 3, {1, 2, 3})
                        and _all_led(m, "made-by-confluent", 2, {1, 2, 3}), "both new topics led")
    made = await zk_partitions(zk, ["made-by-kafka-python", "made-by-confluent"])
    assert sorted(len(r) for _, r, _ in made.values()) == [2, 2, 2, 3, 3]


async def test_a_broker_refuses_stale_controller_and_broker_epochs_on_the_wire(cluster, zk):
    brokers = (await zk.get_all_brokers_and_epochs()).values
    target = brokers[1]
    broker = Broker(1, (EndPoint("127.0.0.1", cluster.brokers[1].port, "PLAINTEXT", "PLAINTEXT"),))
    epoch = (await zk.get_controller_epoch())[0]
    state = LeaderAndIsrPartitionState("orders", 0, epoch, 1, 999, (1,), 0, (1, 2))
    stop = (StopReplicaPartitionState("orders", 0, 999, False),)

    def requests(controller_epoch: int, broker_epoch: int) -> list:
        return [UpdateMetadataRequest(99, controller_epoch, broker_epoch),
                LeaderAndIsrRequest(99, controller_epoch, broker_epoch, partition_states=(state,)),
                StopReplicaRequest(99, controller_epoch, broker_epoch, partition_states=stop)]

    transport = TcpTransport(AsyncioRuntime())
    try:
        stale_controller = [await transport.send(broker, r) for r in requests(epoch - 1, target.epoch)]
        stale_broker = [await transport.send(broker, r) for r in requests(epoch, target.epoch - 1)]
    finally:
        await transport.close()
    assert [r.error for r in stale_controller] == [Errors.STALE_CONTROLLER_EPOCH] * 3
    assert [r.error for r in stale_broker] == [Errors.STALE_BROKER_EPOCH] * 3


def scrape(cluster, broker_id: int) -> dict[str, float]:
    """One broker's /metrics as {sample name (with labels): value}."""
    url = f"http://127.0.0.1:{cluster.brokers[broker_id].metrics_port}/metrics"
    with urllib.request.urlopen(url, timeout=10) as response:
        text = response.read().decode()
    return {name: float(value) for line in text.splitlines() if line and not line.startswith("#")
            for name, value in [line.rsplit(" ", 1)]}


async def scrape_all(cluster, brokers) -> dict[int, dict[str, float]]:
    return {b: await asyncio.to_thread(scrape, cluster, b) for b in sorted(brokers)}


async def test_each_broker_exposes_kafkas_metrics_to_prometheus(cluster, zk):
    await ensure_orders(cluster, zk)
    controller = await zk.get_controller_id()
    led = await zk_partitions(zk, sorted(await zk.get_all_topics_in_cluster()))
    leads = {b: sum(1 for leader, _, _ in led.values() if leader == b) for b in (1, 2, 3)}
    # each follower fetches from each leader in one fetch session holding the partitions it follows there
    followers = {b: {r for leader, replicas, _ in led.values() if leader == b for r in replicas if r != b}
                 for b in (1, 2, 3)}
    followed = {b: sum(len(replicas) - 1 for leader, replicas, _ in led.values() if leader == b) for b in (1, 2, 3)}
    metrics: dict[int, dict[str, float]] = {}

    async def leader_counts_caught_up() -> bool:  # each broker counts its leaders once its LeaderAndIsr is handled
        metrics.update(await scrape_all(cluster, (1, 2, 3)))
        return all(metrics[b]["kafka_server_replicamanager_leadercount"] == leads[b]
                   # sessions of followers that restarted may linger until evicted, as in Kafka: at least
                   and metrics[b]["kafka_server_fetchsessioncache_numincrementalfetchsessions"] >= len(followers[b])
                   and metrics[b]["kafka_server_fetchsessioncache_numincrementalfetchpartitionscached"]
                   >= followed[b] for b in (1, 2, 3))

    await wait_until(leader_counts_caught_up, timeout_s=30,
                     what="every broker's LeaderCount and fetch sessions as ZooKeeper's partitions imply",
                     poll_s=0.2)
    assert [metrics[b]["kafka_controller_kafkacontroller_activecontrollercount"] for b in (1, 2, 3)] == \
        [1.0 if b == controller else 0.0 for b in (1, 2, 3)]
    active = metrics[controller]
    assert active["kafka_controller_kafkacontroller_globaltopiccount"] >= 1
    assert active["kafka_controller_kafkacontroller_globalpartitioncount"] >= 6
    assert active["kafka_controller_kafkacontroller_offlinepartitionscount"] == 0
    assert active['kafka_controller_controllerstats_rateandtimems_count{name="TopicChangeRateAndTimeMs"}'] >= 1
    assert active["kafka_controller_controllereventmanager_eventqueuetimems_count"] >= 1


async def test_controller_to_broker_traffic_decodes_in_tsharks_kafka_dissector(cluster, tmp_path: Path):
    """Debian's tshark (Wireshark 4.0) knows LeaderAndIsr to v4, UpdateMetadata to v6 and StopReplica to v2, so
    this capture is of a second cluster at inter.broker.protocol.version=2.5, which sends exactly those (the
    IBP 2.8 versions are covered by the round-trip tests; Wireshark 4.0 calls them unsupported)."""
    tshark = require_tool("tshark", "not on PATH (decodes the captured control traffic)")
    hosts = cluster.zookeeper_connect.split("/")[0]
    ibp25 = ProcessCluster([1, 2], tmp_path / "ibp25", zookeeper=f"{hosts}/ibp25",
                           session_timeout_ms=SESSION_TIMEOUT_MS, extra={"inter.broker.protocol.version": "2.5"})
    ports = [b.port for b in ibp25.brokers.values()]
    pcap = tmp_path / "control.pcap"
    capture = await asyncio.create_subprocess_exec(
        tshark, "-i", "lo", "-f", " or ".join(f"tcp port {p}" for p in ports), "-w", str(pcap),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    backend = make_backend(ibp25.zookeeper_connect, wall_clock_ms)
    try:
        await wait_until(lambda: pcap.exists() or capture.returncode is not None, timeout_s=20,
                         what="tshark to start capturing", poll_s=0.05)
        if capture.returncode is not None:
            tool_missing("tshark", f"cannot capture on loopback here (exit {capture.returncode}; capturing needs "
                                   "root or dumpcap's capabilities)")
        ibp25.start()
        session = await backend.new_session()
        zk = KafkaZkClient(session, wall_clock_ms)
        await wait_registered(zk, [1, 2])
        await create_topic(zk, "captured", 3, 2)
        await wait_for_kcat(ibp25.bootstrap.split(",")[0], lambda m: _all_led(m, "captured", 3, {1, 2}),
                            "captured led")
        await session.close()
    finally:
        await asyncio.to_thread(ibp25.stop)
        await backend.close()
        if capture.returncode is None:
            capture.terminate()
        await asyncio.wait_for(capture.wait(), 20)
    decode_as = [arg for p in ports for arg in ("-d", f"tcp.port=={p},kafka")]

    def tshark(*args: str) -> list[str]:
        done = subprocess.run(["tshark", "-r", str(pcap), *decode_as, *args], capture_output=True, text=True,
                              timeout=60, check=True)
        return [line for line in done.stdout.split("\n") if line.strip()]

    requests = tshark("-Y", "kafka.request_key", "-T", "fields", "-e", "kafka.request_key", "-e", "kafka.api_version")
    seen = {tuple(line.split("\t")) for line in requests}
    assert {("4", "4"), ("6", "6")} <= seen, f"no LeaderAndIsr v4 / UpdateMetadata v6 captured: {sorted(seen)}"
    assert tshark("-Y", "_ws.malformed") == []


# ---------------------------------------------------------------------------------------------- failures

async def test_sigterm_is_a_controlled_shutdown(cluster, zk):
    """SIGTERM = Kafka's orderly stop: the broker asks the controller to move its leadership first, and only
    then leaves; when it has exited it leads nothing, and no partition lost its leader in between."""
    # A fresh topic too, so that the broker surely leads something.
    controller = await zk.get_controller_id()
    victim = next(b for b in (1, 2, 3) if b != controller)
    await TopicAdmin(zk, random.Random(7)).create_topic("graceful", 6, 2)
    addr = f"127.0.0.1:{cluster.brokers[controller].port}"
    await wait_for_kcat(addr, lambda m: _all_led(m, "graceful", 6, {1, 2, 3}), "graceful led")
    led = [tp for tp, (leader, _, _) in (await zk_partitions(zk, ["graceful"])).items() if leader == victim]
    assert led, f"broker {victim} leads nothing in graceful"
    log, controller_log = cluster.brokers[victim].log, cluster.brokers[controller].log
    seen, controller_seen = log.stat().st_size, controller_log.stat().st_size
    cluster.signal(victim, signal.SIGTERM)
    # During its controlled shutdown the prompt shows it stopping, and `start` says to wait for the exit.
    assert cluster.brokers[victim].state in ("stopping", "exited (0)")
    if cluster.brokers[victim].state == "stopping":
        with pytest.raises(ValueError, match="still in its controlled shutdown"):
            cluster.start_broker(victim)
    assert await asyncio.to_thread(cluster.wait_exit, victim, 60) == 0
    lines = log.read_text()[seen:]
    assert "Controlled shutdown succeeded" in lines, lines[-2000:]
    assert lines.index("Controlled shutdown succeeded") < lines.index("shut down completed")
    assert f"Shutting down broker {victim}" in controller_log.read_text()[controller_seen:]
    after = await zk_partitions(zk, ["graceful"])
    assert all(after[tp][0] not in (victim, -1) and victim not in after[tp][2] for tp in led), after
    # Back with the short session: the kill tests next kill it (`short_session_victim`), with no restart of their own.
    start_broker_with_session(cluster, victim, LOST_SESSION_TIMEOUT_MS)
    await wait_for_kcat(addr, lambda m: len(m["brokers"]) == 3, f"broker {victim} back", timeout_s=30)


async def short_session_victim(cluster: ProcessCluster, zk: KafkaZkClient, controller: int) -> int:
    """A broker other than the controller whose process runs with the short session, to be killed: one that
    already does (the previous test restarted it so), else one restarted so (an orderly stop, which closes its
    session at once, then a start), registered again."""
    others = [b for b in (1, 2, 3) if b != controller]
    for b in others:
        if cluster.brokers[b].state == "running" and session_timeout_ms(cluster, b) == LOST_SESSION_TIMEOUT_MS:
            return b
    victim = others[0]
    cluster.signal(victim, signal.SIGTERM)
    assert await asyncio.to_thread(cluster.wait_exit, victim, 60) == 0
    start_broker_with_session(cluster, victim, LOST_SESSION_TIMEOUT_MS)
    await wait_registered(zk, [1, 2, 3], cluster=cluster)
    return victim


async def test_kill_9_of_a_leader_moves_leadership(cluster, zk):
    controller = await zk.get_controller_id()
    victim = await short_session_victim(cluster, zk, controller)
    # A topic of its own, created once the victim is (back) up: it leads some of its partitions (Kafka's
    # placement spreads the leaders of 6 partitions over 3 brokers), whichever tests ran before.
    if "struck" not in await zk.get_all_topics_in_cluster():
        await create_topic(zk, "struck", 6, 2)
    addr = f"127.0.0.1:{cluster.brokers[controller].port}"
    await wait_for_kcat(addr, lambda m: _all_led(m, "struck", 6, {1, 2, 3}), "struck led on every partition")
    led = [tp for tp, (leader, _, _) in (await zk_partitions(zk, ["struck"])).items() if leader == victim]
    assert led, f"broker {victim} leads nothing in struck"
    hosted = [tp for tp, (_, replicas, _) in (await zk_partitions(zk, ["struck"])).items() if victim in replicas]
    before = await scrape_all(cluster, {1, 2, 3} - {victim})
    cluster.signal(victim, signal.SIGKILL)
    live = {1, 2, 3} - {victim}
    md = await wait_for_kcat(addr, lambda m: _all_led(m, "struck", 6, live) and
                             sorted(b["id"] for b in m["brokers"]) == sorted(live),
                             f"new leaders for broker {victim}'s partitions", timeout_s=30)
    assert all(kcat_partitions(md)[tp][0] in live for tp in led)
    # Back with the short session still: the next test kills it again.
    start_broker_with_session(cluster, victim, LOST_SESSION_TIMEOUT_MS)
    await wait_for_kcat(addr, lambda m: len(m["brokers"]) == 3, f"broker {victim} back", timeout_s=30)

    # It fetches from the leaders over the wire (Fetch v12), catches up, and they take it back into every ISR.
    def healed(m: dict) -> bool:
        parts = kcat_partitions(m)
        struck = [v for tp, v in parts.items() if tp.topic == "struck"]
        return len(struck) == 6 and all(sorted(isr) == sorted(replicas) for _, replicas, isr in struck)

    await wait_for_kcat(addr, healed, f"broker {victim} back in every ISR of struck", timeout_s=60)
    # The controller took the dead broker out of the ISRs; taking it back is the leaders' own work, which their
    # IsrExpandsPerSec counts (once per partition of struck it holds a replica of, at least), and once every ISR
    # is whole no leader reports an under-replicated partition.
    after = await scrape_all(cluster, live)
    expands = "kafka_server_replicamanager_isrexpandspersec_total"
    assert sum(after[b][expands] - before[b][expands] for b in live) >= len(hosted)
    await wait_until(lambda: all(scrape(cluster, b)["kafka_server_replicamanager_underreplicatedpartitions"] == 0
                                 for b in (1, 2, 3)), timeout_s=30, what="no under-replicated partition")


async def test_start_right_after_kill_9_starts_the_broker_again(cluster, zk):
    """The prompt's `kill N` then `start N` said "broker N is already running": the killed process was not
    reaped yet. The new process registers with a new broker epoch (once the killed one's short session has
    expired); it runs with the cluster's long session."""
    controller = await zk.get_controller_id()
    victim = await short_session_victim(cluster, zk, controller)
    before = await zk.get_broker(victim)
    assert before is not None
    cluster.signal(victim, signal.SIGKILL)
    cluster.start_broker(victim)

    async def registered_again() -> bool:
        now = await zk.get_broker(victim)
        return now is not None and now.epoch != before.epoch

    await wait_until(registered_again, timeout_s=30, what=f"broker {victim} registered by its new process")
    await wait_registered(zk, [1, 2, 3])


async def test_sigstop_of_the_controller_past_its_session_gives_a_new_controller(cluster, tmp_path: Path):
    """On two brokers of their own (the module's ZooKeeper, under a chroot): the controller must be the broker
    with the short session, so broker 1 gets it and starts alone, which makes it the controller; broker 2 keeps
    the long one."""
    hosts = cluster.zookeeper_connect.split("/")[0]
    stalled = ProcessCluster([1, 2], tmp_path / "stalled", zookeeper=f"{hosts}/stalled",
                             session_timeout_ms=SESSION_TIMEOUT_MS, extra=QUICK_SHUTDOWN_RETRIES)
    backend = make_backend(stalled.zookeeper_connect, wall_clock_ms)
    try:
        zk = KafkaZkClient(await backend.new_session(), wall_clock_ms)
        start_broker_with_session(stalled, 1, LOST_SESSION_TIMEOUT_MS)
        await wait_registered(zk, [1], cluster=stalled)

        async def broker_1_controls() -> bool:  # a broker registers before it runs for controller
            return await zk.get_controller_id() == 1

        await wait_until(broker_1_controls, timeout_s=30, what="broker 1 to become the controller")
        stalled.start_broker(2)
        await wait_registered(zk, [1, 2], cluster=stalled)
        old, other = 1, 2
        assert await zk.get_controller_id() == old
        old_epoch = (await zk.get_controller_epoch())[0]
        addr = f"127.0.0.1:{stalled.brokers[other].port}"
        await wait_for_kcat(addr, lambda m: m["controllerid"] == old and len(m["brokers"]) == 2,
                            f"broker {other} to know both brokers and the controller")
        log = stalled.brokers[old].log
        seen = log.stat().st_size
        stalled.signal(old, signal.SIGSTOP)
        try:
            md = await wait_for_kcat(addr, lambda m: m["controllerid"] not in (old, -1), "a new controller id",
                                     timeout_s=30)
        finally:
            stalled.signal(old, signal.SIGCONT)
        new = md["controllerid"]
        assert new == other and (await zk.get_controller_epoch())[0] > old_epoch
        # The resumed process finds its session gone: it resigns, re-registers, and follows the new controller.
        resumed = f"127.0.0.1:{stalled.brokers[old].port}"
        await wait_for_kcat(resumed, lambda m: m["controllerid"] == new and len(m["brokers"]) == 2,
                            "the resumed broker to learn the new controller", timeout_s=30)
        assert await zk.get_controller_id() == new
        # ...and it resigned on finding its session expired (the seed articles' stalled controller, for real).
        await wait_until(lambda: f"[Controller id={old}] Resigned" in log.read_text()[seen:], timeout_s=20,
                         what=f"broker {old}'s controller to resign", poll_s=0.1)
        assert "[ZooKeeperClient Kafka server] Session expired." in log.read_text()[seen:]
    finally:
        await asyncio.to_thread(stalled.stop)
        await backend.close()
