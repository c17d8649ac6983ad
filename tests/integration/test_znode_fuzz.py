"""Bad bytes in every znode the controller (and the brokers beside it) read or watch: the controller survives.

For each znode, Hypothesis writes generated bad data (random bytes, non-UTF-8, truncated JSON, JSON of the wrong
shape or types, huge or negative numbers, empty) into a running embedded cluster at the moment it is read (a new
node fires its watch; a node read only at failover is followed by one) and checks that

(a) a controller is still active and still handles events: a topic created after the bad write gets leaders;
(b) data its decoder refuses is reported in a WARN/ERROR line naming the znode's path;
(c) nothing else is lost: every topic created before keeps its leaders.

One cluster serves every example of a test (its loop runs in a thread of its own, so that Hypothesis drives a
plain function and shrinks as usual); the bad nodes of earlier examples stay, so later failovers re-read them
too. Embedded store only: what is exercised is our decoding and handling, not the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import os
import threading
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, Phase, assume, example, given, settings
from hypothesis import strategies as st
from tests.helpers import OffsetClock, wait_until

from zkcontroller.broker.config import ReplicationConfig
from zkcontroller.cluster.local_cluster import LocalCluster
from zkcontroller.coordination.api import CreateMode
from zkcontroller.coordination.embedded_backend import EmbeddedBackend
from zkcontroller.coordination.errors import BadArgumentsError, NodeExistsError, NoNodeError
from zkcontroller.model import ReplicaAssignment, TopicPartition
from zkcontroller.runtime.clock import wall_clock_ms
from zkcontroller.runtime.in_process import InProcessTransport
from zkcontroller.zk import paths
from zkcontroller.zk.errors import ZnodeDecodeError
from zkcontroller.zk.kafka_zk_client import KafkaZkClient
from zkcontroller.zk.znodes import (
    BrokerIdZNode,
    ClusterIdZNode,
    ConfigEntityChangeNotificationSequenceZNode,
    ConfigEntityZNode,
    ControllerEpochZNode,
    ControllerZNode,
    FeatureZNode,
    IsrChangeNotificationSequenceZNode,
    LogDirEventNotificationSequenceZNode,
    PreferredReplicaElectionZNode,
    ProducerIdBlockZNode,
    ReassignPartitionsZNode,
    TopicPartitionStateZNode,
    TopicZNode,
)

T = TypeVar("T")
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "12"))
"""Per znode: each example costs a write, a topic creation and, for nodes read at failover, an election.
``FUZZ_EXAMPLES=200 FUZZ_RANDOM=1`` hunts further (fresh random data each run) than the fixed, derandomized
default a test run uses."""
FUZZ = settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=not os.environ.get("FUZZ_RANDOM"),
                phases=[Phase.explicit, Phase.generate],
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
"""No shrinking: each step would replay on the one cluster; the failing example is printed as generated."""

# ---------------------------------------------------------------------------------------------------- strategies

_json_leaf = st.one_of(
    st.none(), st.booleans(), st.text(max_size=8),
    st.integers(min_value=-3, max_value=5),
    st.sampled_from([-1, -(2**31), 2**31 - 1, 2**31, -(2**31) - 1, 2**63, 10**40, -(10**40)]),
    st.floats(allow_nan=False, allow_infinity=False),
)
json_values = st.recursive(_json_leaf, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)), max_leaves=8)


def _replace_at(doc: Any, route: list[int], value: Any) -> Any:
    """``doc`` with the field (or item) that ``route`` picks, level by level, replaced by ``value``."""
    if not route or not isinstance(doc, dict | list) or not doc:
        return value
    if isinstance(doc, dict):
        keys = sorted(doc)
        key = keys[route[0] % len(keys)]
        return {**doc, key: _replace_at(doc[key], route[1:], value)}
    i = route[0] % len(doc)
    return [*doc[:i], _replace_at(doc[i], route[1:], value), *doc[i + 1:]]


def _drop_at(doc: Any, route: list[int]) -> Any:
    if not isinstance(doc, dict) or not doc:
        return doc
    keys = sorted(doc)
    key = keys[route[0] % len(keys)] if route else keys[0]
    if len(route) > 1 and isinstance(doc[key], dict):
        return {**doc, key: _drop_at(doc[key], route[1:])}
    return {k: v for k, v in doc.items() if k != key}


def bad_data(valid: bytes) -> st.SearchStrategy[bytes]:
    """Bytes near and far from ``valid`` (a well-formed value of the znode): most are malformed."""
    doc = None
    with contextlib.suppress(ValueError):
        doc = json.loads(valid)
    routes = st.lists(st.integers(min_value=0, max_value=7), min_size=1, max_size=3)
    near: list[st.SearchStrategy[bytes]] = [
        st.integers(min_value=0, max_value=max(len(valid) - 1, 0)).map(lambda n: valid[:n]),  # truncated
        st.builds(lambda n, b: valid[:n] + b + valid[n + 1:],
                  st.integers(min_value=0, max_value=max(len(valid) - 1, 0)),
                  st.sampled_from([b"\xff", b"\xc3", b"\x00", b"\xed\xa0\x80", b'"', b"}", b"9" * 30])),
    ]
    if isinstance(doc, dict | list):
        near += [
            st.builds(lambda r, v: json.dumps(_replace_at(doc, r, v)).encode(), routes, json_values),
            st.builds(lambda r: json.dumps(_drop_at(doc, r)).encode(), routes),
        ]
    far = [
        st.binary(max_size=40),
        st.just(b""),
        st.sampled_from([b"\xff\xfe", b"null", b"[]", b"{}", b"\xef\xbb\xbf", b"-1", b"1e999", b"{" * 2000]),
        json_values.map(lambda v: json.dumps(v).encode()),
    ]
    return st.one_of(*near, *far)


broker_ids = st.sampled_from([1, 2, 3, 0, -1, 9, -(2**31), 2**31 - 1])
replica_lists = st.lists(broker_ids, max_size=4)
partition_keys = st.sampled_from(["0", "1", "2", "-1", "00", "+1", " 1", "2147483647", "2147483648", "x", ""])
topic_names = st.sampled_from(["ok0", "ok1", "nope", "", "ok0 ", "a" * 300, ".", "..", "a/b", "/", "\x00", "\ud800",
                               "zookeeper"])
partition_ids = st.sampled_from([0, 1, 2, -1, 2**31 - 1, 7])


def json_bytes(values: st.SearchStrategy[Any]) -> st.SearchStrategy[bytes]:
    return values.map(lambda v: json.dumps(v).encode())


def well_typed(node: str) -> st.SearchStrategy[bytes]:
    """Data of the right shape and types whose values make no sense (unknown brokers, duplicate replicas, empty
    or negative lists, partitions and topics that do not exist): decodable, so handled past the decoder."""
    tp = st.fixed_dictionaries({"topic": topic_names, "partition": partition_ids})
    shapes: dict[str, st.SearchStrategy[Any]] = {
        "topic": st.fixed_dictionaries(
            {"version": st.sampled_from([1, 2, 3, 99]),
             "partitions": st.dictionaries(partition_keys, replica_lists, max_size=3)},
            optional={"adding_replicas": st.dictionaries(partition_keys, replica_lists, max_size=2),
                      "removing_replicas": st.dictionaries(partition_keys, replica_lists, max_size=2),
                      "topic_id": st.sampled_from(["AAAAAAAAAAAAAAAAAAAAAA", "x", "", "ZZZZZZZZZZZZZZZZZZZZZZ"])}),
        "state": st.fixed_dictionaries({"version": st.just(1), "leader": broker_ids, "leader_epoch": broker_ids,
                                        "controller_epoch": broker_ids, "isr": replica_lists}),
        "reassign": st.fixed_dictionaries({"version": st.just(1), "partitions": st.lists(st.fixed_dictionaries(
            {"topic": topic_names, "partition": partition_ids, "replicas": replica_lists}), max_size=3)}),
        "partitions": st.fixed_dictionaries({"version": st.just(1), "partitions": st.lists(tp, max_size=3)}),
        "log_dir": st.fixed_dictionaries({"version": st.just(1), "broker": broker_ids, "event": broker_ids}),
        "config_change": st.one_of(
            st.fixed_dictionaries({"version": st.just(2), "entity_path": st.sampled_from(
                ["topics/ok0", "topics/nope", "brokers/1", "brokers/<default>", "brokers/x", "users/u", "nope/x",
                 "topics", "", "/", "topics/ok0/x", "brokers/-1", "topics/", "topics/.", "topics/..", "brokers/..",
                 "users/..", "clients/\x00", "topics/\x00", "brokers/\ud800", "users/a/b", "clients/",
                 "users/<default>/clients/..", "ips/..", "brokers/1/x"])}),
            st.fixed_dictionaries({
                "version": st.just(1), "entity_type": st.sampled_from(["topics", "brokers", "x"]),
                "entity_name": st.sampled_from(["ok0", "1", "<default>", "", "a/b", "..", "\x00"])})),
        "config": st.fixed_dictionaries({"version": st.just(1), "config": st.dictionaries(
            st.sampled_from(["unclean.leader.election.enable", "retention.ms", "min.insync.replicas",
                             "cleanup.policy", "segment.bytes", "x"]),
            st.sampled_from(["true", "false", "TRUE", "", "-1", "0", "99999999999999999999", "compact,delete",
                             "nope"]), max_size=3)}),
        "feature": st.fixed_dictionaries({"version": st.sampled_from([1, 2]), "status": st.sampled_from([0, 1]),
                                          "features": st.dictionaries(st.sampled_from(["a", ""]), st.fixed_dictionaries(
                                              {"min_version_level": broker_ids, "max_version_level": broker_ids}),
                                              max_size=2)}),
    }
    return json_bytes(shapes[node])


# ---------------------------------------------------------------------------------------------------- the rig


class Rig:
    """A three-broker embedded cluster whose event loop runs in a thread of its own, and an admin client."""

    BROKERS = (1, 2, 3)

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="znode-fuzz-loop", daemon=True)
        self._thread.start()
        self.topics: dict[str, int] = {}
        self._names = itertools.count()
        self.backend = EmbeddedBackend(OffsetClock(wall_clock_ms))
        self.cluster = LocalCluster(
            self.backend, list(self.BROKERS), wall_clock_ms, session_timeout_ms=6000, transport=InProcessTransport(),
            replication=ReplicationConfig(replica_fetching=False))
        self.run(self.cluster.start())
        self.admin = KafkaZkClient(self.run(self.backend.new_session()), wall_clock_ms)
        self.run(self.cluster.wait_for_controller())

    def run(self, coro: Coroutine[Any, Any, T], timeout_s: float = 60.0) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout_s)

    def name(self, stem: str) -> str:
        return f"{stem}{next(self._names)}"

    def close(self) -> None:
        try:
            self.run(self.cluster.shutdown(timeout_s=20.0))
            self.run(self.admin.session.close())
            self.run(self.backend.close())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(10)
            self.loop.close()

    async def write(self, path: str, data: bytes, mode: CreateMode = CreateMode.PERSISTENT) -> str:
        """Create ``path`` with ``data`` (its parents too), or set it if it exists; the path written."""
        session = self.admin.session
        try:
            return await session.create(path, data, mode)
        except NodeExistsError:
            await session.set_data(path, data)
            return path
        except NoNodeError:
            await session.ensure_path(path.rsplit("/", 1)[0])
            return await session.create(path, data, mode)

    async def alive(self) -> None:
        """(a) and (c): a controller is active and idle, a topic created now gets leaders, and every topic
        created before still has leaders."""
        controller = await self.cluster.wait_for_controller(timeout_s=20.0)
        topic = self.name("ok")
        assignment = {TopicPartition(topic, 0): ReplicaAssignment((1, 2)),
                      TopicPartition(topic, 1): ReplicaAssignment((2, 3))}
        await self.admin.create_topic_assignment(topic, None, assignment)
        self.topics[topic] = 2
        wanted = {TopicPartition(t, p) for t, n in self.topics.items() for p in range(n)}

        def led() -> bool:
            active = self.cluster.active_controller()
            return active is not None and wanted <= active.context.partitions_with_leaders

        await wait_until(led, timeout_s=20.0, what=f"leaders for {sorted(wanted)} (controller was "
                                                    f"{controller.controller_id})", poll_s=0.01)

    async def failover(self) -> None:
        """Make the controller re-read everything: delete ``/controller`` (a new election, a new epoch)."""
        before = await self.cluster.wait_for_controller(timeout_s=20.0)
        epoch = before.context.epoch
        with contextlib.suppress(NoNodeError):
            await self.admin.session.delete(paths.CONTROLLER)
        await self.cluster.wait_for_controller(timeout_s=20.0, min_epoch=epoch + 1)


@pytest.fixture
def rig() -> Iterator[Rig]:
    r = Rig()
    try:
        yield r
    finally:
        r.close()


def refused(decode: Callable[[], object]) -> bool:
    try:
        decode()
    except ZnodeDecodeError:
        return True
    return False


def reported(caplog: pytest.LogCaptureFixture, path: str) -> Callable[[], bool]:
    """A WARN/ERROR line naming ``path`` in its message or in the exception logged with it (Kafka's "Error
    processing event X" names only the event; its stack trace says what failed)."""
    return lambda: any(r.levelno >= logging.WARNING
                       and (path in r.getMessage() or (r.exc_info is not None and path in str(r.exc_info[1])))
                       for r in caplog.records)


def check(rig: Rig, caplog: pytest.LogCaptureFixture, path: str, bad: bool,
          trigger: Callable[[], Awaitable[None]] | None = None) -> None:
    async def go() -> None:
        if trigger is not None:
            await trigger()
        await rig.alive()
        if bad:
            await wait_until(reported(caplog, path), timeout_s=10.0, what=f"a WARN/ERROR line naming {path}")

    rig.run(go())


@pytest.fixture(autouse=True)
def _warnings(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)


def _before(caplog: pytest.LogCaptureFixture) -> None:
    caplog.clear()


# ---------------------------------------------------------------------------------------------------- the znodes

BROKER_REGISTRATION = (b'{"version":5,"host":"h","port":9092,"endpoints":["PLAINTEXT://h:9092"],"jmx_port":-1,'
                       b'"timestamp":"1","listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},"features":{}}')
TOPIC = b'{"version":3,"partitions":{"0":[1,2],"1":[2,3]},"adding_replicas":{},"removing_replicas":{}}'
PARTITION_STATE = b'{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1,2]}'
CONTROLLER = b'{"version":1,"brokerid":1,"timestamp":"1"}'
REASSIGNMENT = b'{"version":1,"partitions":[{"topic":"ok0","partition":0,"replicas":[2,3]}]}'
PARTITIONS = b'{"version":1,"partitions":[{"topic":"ok0","partition":0}]}'
LOG_DIR_EVENT = b'{"version":1,"broker":2,"event":1}'
CONFIG_CHANGE = b'{"version":2,"entity_path":"topics/ok0"}'
ENTITY_CONFIG = b'{"version":1,"config":{"retention.ms":"1000","unclean.leader.election.enable":"false"}}'
FEATURES = b'{"features":{},"version":1,"status":1}'
CLUSTER_ID = b'{"version":"1","id":"fuzzed-cluster-id"}'
PRODUCER_ID_BLOCK = b'{"version":1,"broker":1,"block_start":"0","block_end":"999"}'


@given(data=bad_data(BROKER_REGISTRATION), name=st.sampled_from(["9", "-7", "2147483648", "x"]))
@FUZZ
def test_broker_registration(rig: Rig, caplog: pytest.LogCaptureFixture, data: bytes, name: str) -> None:
    """A new child of /brokers/ids (BrokerChange); removed again after each example."""
    path = f"{paths.BROKER_IDS}/{name}"
    rig.run(rig.write(path, data, CreateMode.EPHEMERAL))
    try:
        check(rig, caplog, path, refused(lambda: BrokerIdZNode.decode(data, path)))
    finally:
        rig.run(rig.admin.session.delete(path))


@given(data=bad_data(BROKER_REGISTRATION))
@FUZZ
def test_live_broker_registration_overwritten(rig: Rig, caplog: pytest.LogCaptureFixture, data: bytes) -> None:
    """A live broker's own registration changed under it (Kafka's BrokerModifications): the cached one stays."""
    path = paths.broker_id_path(3)
    original, _ = rig.run(rig.admin.session.get_data(path))
    rig.run(rig.write(path, data))
    try:
        check(rig, caplog, path, refused(lambda: BrokerIdZNode.decode(data, path)))
    finally:
        rig.run(rig.admin.session.set_data(path, original))


@given(data=bad_data(TOPIC) | well_typed("topic"))
@FUZZ
def test_new_topic(rig: Rig, caplog: pytest.LogCaptureFixture, data: bytes) -> None:
    path = paths.topic_path(rig.name("bad"))
    rig.run(rig.write(path, data))
    check(rig, caplog, path, refused(lambda: TopicZNode.decode(data, path)))


@given(data=bad_data(TOPIC) | well_typed("topic"))
@FUZZ
def test_existing_topic_overwritten(rig: Rig, caplog: pytest.LogCaptureFixture, data: bytes) -> None:
    """An existing topic's assignment replaced (Kafka's PartitionModifications), then re-read at failover."""
    rig.run(rig.alive())
    topic = rig.run(_led_victim(rig, "victim"))
    path = paths.topic_path(topic)
    rig.run(rig.write(path, data))
    check(rig, caplog, path, refused(lambda: TopicZNode.decode(data, path)), rig.failover)


@given(data=bad_data(PARTITION_STATE) | well_typed("state"))
@FUZZ
def test_partition_state(rig: Rig, caplog: pytest.LogCaptureFixture, data: bytes) -> None:
    """Read at failover (and by ISR-change handling): the partition has no readable state."""
    topic = rig.run(_led_victim(rig, "victim"))
    path = paths.partition_state_path(topic, 0)
    rig.run(rig.write(path, data))
    check(rig, caplog, path, refused(lambda: TopicPartitionStateZNode.decode(data, path, 1)), rig.failover)


@given(data=bad_data(CONTROLLER))
@FUZZ
def test_controller_overwritten(rig: Rig, caplog: pytest.LogCaptureFixture, data: bytes) -> None:
    """``/controller`` rewritten by another client (ControllerChange): whatever it now says, a controller is
    elected again (the owner deletes a node of its session that does not name it)."""
    path = paths.CONTROLLER
    rig.run(rig.cluster.wait_for_controller(timeout_s=20.0))
    with contextlib.suppress(NoNodeError):
        rig.run(rig.admin.session.set_data(path, data))
    check(rig, caplog, path, refused(lambda: ControllerZNode.decode(data, path)))


@given(data=bad_data(b"7"))
@FUZZ
@example(data=b"\xed\xa0\x80")
def test_controller_epoch(rig: Rig, caplog: pytest.LogCaptureFixture, data: bytes) -> None:
    """``/controller_epoch`` is read at each election: an unreadable one is reported and the election waits
    for it to be fixed (no controller can be elected without an epoch); once fixed, one is elected."""
    path = paths.CONTROLLER_EPOCH
    bad = refused(lambda: ControllerEpochZNode.decode(data, path))
    # A readable epoch lower than the brokers have seen fences every request of the next controller, in Kafka as
    # here (its brokers answer STALE_CONTROLLER_EPOCH); not malformed data, so not exercised.
    assume(bad)

    async def trigger() -> None:
        before = await rig.cluster.wait_for_controller(timeout_s=20.0)
        epoch = before.context.epoch
        await rig.admin.session.set_data(path, data)
        await rig.admin.session.delete(paths.CONTROLLER)
        if bad:
            await wait_until(reported(caplog, path), timeout_s=10.0, what=f"a WARN/ERROR line naming {path}")
            await rig.admin.session.set_data(path, str(epoch + 1).encode())
        await rig.cluster.wait_for_controller(timeout_s=20.0)

    check(rig, caplog, path, bad, trigger)


@given(data=bad_data(REASSIGNMENT) | well_typed("reassign"))
@FUZZ
@example(data=b"null")
@example(data=b'{"version":1}')
def test_reassign_partitions(rig: Rig, caplog: pytest.LogCaptureFixture, data: bytes) -> None:
    """Kafka warns "Ignoring partition reassignment due to invalid json" and leaves the node; JSON whose nulls its
    decoder dereferences throws ("Error processing event ZkPartitionReassignment"), and the node stays too."""
    rig.run(rig.alive())
    path = paths.REASSIGN_PARTITIONS
    rig.run(rig.write(path, data))
    check(rig, caplog, path, refused(lambda: ReassignPartitionsZNode.decode(data, path)))
    rig.run(_delete_if_present(rig, path))


@given(data=bad_data(PARTITIONS) | well_typed("partitions"))
@FUZZ
def test_preferred_replica_election(rig: Rig, caplog: pytest.LogCaptureFixture, data: bytes) -> None:
    rig.run(rig.alive())
    path = paths.PREFERRED_REPLICA_ELECTION
    bad = refused(lambda: PreferredReplicaElectionZNode.decode(data, path))
    rig.run(rig.write(path, data))
    check(rig, caplog, path, bad)
    if bad:  # the controller deletes the request it cannot read, so that the next one can be made
        rig.run(wait_until(_absent(rig, path), timeout_s=10.0, what=f"{path} deleted"))
    rig.run(_delete_if_present(rig, path))


_ZK_NAME = st.text(st.characters(min_codepoint=0x21, max_codepoint=0xD7FF, exclude_characters="/"), min_size=1,
                   max_size=20).filter(lambda s: s not in (".", "..", "zookeeper"))


@given(name=st.one_of(_ZK_NAME, st.sampled_from(["-1", "a" * 300, "ok0 ", "partitions", "__consumer_offsets"])),
       data=st.binary(max_size=20))
@FUZZ
def test_delete_topics_child(rig: Rig, caplog: pytest.LogCaptureFixture, name: str, data: bytes) -> None:
    """A request to delete a topic that does not exist (with any data, which nobody reads): Kafka warns with the
    topic's name and deletes the request."""
    rig.run(rig.alive())
    path = paths.delete_topic_path(name)
    try:
        rig.run(rig.write(path, data))
    except BadArgumentsError:
        assume(False)  # not a name ZooKeeper takes
    check(rig, caplog, name, name not in rig.topics)
    rig.run(wait_until(_absent(rig, path), timeout_s=10.0, what=f"{path} deleted"))


@given(data=bad_data(PARTITIONS) | well_typed("partitions"))
@FUZZ
def test_isr_change_notification(rig: Rig, caplog: pytest.LogCaptureFixture, data: bytes) -> None:
    """A bad notification beside a good one: both are deleted once handled (Kafka's ``finally``)."""
    rig.run(rig.alive())

    async def write() -> tuple[str, str]:
        session = rig.admin.session
        bad_path = await session.create(paths.isr_change_path(), data, CreateMode.PERSISTENT_SEQUENTIAL)
        good = await session.create(paths.isr_change_path(), PARTITIONS, CreateMode.PERSISTENT_SEQUENTIAL)
        return bad_path, good

    path, good = rig.run(write())
    check(rig, caplog, path, refused(lambda: IsrChangeNotificationSequenceZNode.decode(data, path)))
    rig.run(wait_until(_absent(rig, path), timeout_s=10.0, what=f"{path} deleted"))
    rig.run(wait_until(_absent(rig, good), timeout_s=10.0, what=f"{good} deleted"))


@given(data=bad_data(LOG_DIR_EVENT) | well_typed("log_dir"))
@FUZZ
def test_log_dir_event_notification(rig: Rig, caplog: pytest.LogCaptureFixture, data: bytes) -> None:
    path = rig.run(rig.admin.session.create(paths.log_dir_event_path(), data, CreateMode.PERSISTENT_SEQUENTIAL))
    check(rig, caplog, path, refused(lambda: LogDirEventNotificationSequenceZNode.decode(data, path)))
    rig.run(wait_until(_absent(rig, path), timeout_s=10.0, what=f"{path} deleted"))


@given(data=bad_data(CONFIG_CHANGE) | well_typed("config_change"))
@FUZZ
def test_config_change_notification(rig: Rig, caplog: pytest.LogCaptureFixture, data: bytes) -> None:
    """Read by the controller (unclean election settings) and by every broker (topic and broker configs)."""
    rig.run(rig.alive())
    path = rig.run(rig.admin.session.create(paths.config_change_path(), data, CreateMode.PERSISTENT_SEQUENTIAL))
    check(rig, caplog, path, refused(lambda: ConfigEntityChangeNotificationSequenceZNode.decode(data, path)))


ENTITIES = st.sampled_from(["topics/ok0", "brokers/<default>", "brokers/1", "brokers/2"])


@given(data=bad_data(ENTITY_CONFIG) | well_typed("config"), entity=ENTITIES)
@FUZZ
def test_entity_config(rig: Rig, caplog: pytest.LogCaptureFixture, data: bytes, entity: str) -> None:
    """An entity's config node, then a change notification naming it (what the config tools write)."""
    rig.run(rig.alive())
    path = f"{paths.CONFIG}/{entity}"

    async def write() -> None:
        await rig.write(path, data)
        await rig.admin.session.create(paths.config_change_path(), CONFIG_CHANGE.replace(b"topics/ok0",
                                       entity.encode()), CreateMode.PERSISTENT_SEQUENTIAL)

    rig.run(write())
    check(rig, caplog, path, refused(lambda: ConfigEntityZNode.decode(data, path)))
    rig.run(rig.write(path, ENTITY_CONFIG))


@given(data=bad_data(ENTITY_CONFIG) | well_typed("config"), entity=ENTITIES)
@settings(FUZZ, max_examples=max(EXAMPLES // 2, 1))
def test_entity_config_read_at_startup(rig: Rig, caplog: pytest.LogCaptureFixture, data: bytes, entity: str
                                       ) -> None:
    """The same nodes read whole, by a new controller and by a restarting broker (no notification)."""
    rig.run(rig.alive())
    path = f"{paths.CONFIG}/{entity}"

    async def restart() -> None:
        await rig.write(path, data)
        await rig.failover()
        await rig.cluster.stop_broker(2)
        await rig.cluster.start_broker(2)

    try:
        check(rig, caplog, path, refused(lambda: ConfigEntityZNode.decode(data, path)), restart)
    finally:
        rig.run(rig.write(path, ENTITY_CONFIG))


@given(data=bad_data(FEATURES) | well_typed("feature"))
@FUZZ
def test_feature(rig: Rig, caplog: pytest.LogCaptureFixture, data: bytes) -> None:
    path = paths.FEATURE
    rig.run(rig.write(path, data))
    check(rig, caplog, path, refused(lambda: FeatureZNode.decode(data, path)), rig.failover)


@given(data=st.binary(max_size=40))
@settings(FUZZ, max_examples=3)
def test_broker_sequence_id(rig: Rig, data: bytes) -> None:
    """Nobody reads its data (a generated broker id is the node's version after a write)."""
    rig.run(rig.write(paths.BROKER_SEQUENCE_ID, data))
    rig.run(rig.failover())
    rig.run(rig.alive())


@given(data=bad_data(CLUSTER_ID))
@settings(FUZZ, max_examples=6)
def test_cluster_id(rig: Rig, caplog: pytest.LogCaptureFixture, data: bytes) -> None:
    """Read by a starting broker: one it cannot read fails that broker's startup naming the node (as Kafka's
    does), and the running brokers are not affected."""
    path = paths.CLUSTER_ID
    bad = refused(lambda: ClusterIdZNode.decode(data, path))
    original, _ = rig.run(rig.admin.session.get_data(path))

    async def restart() -> None:
        await rig.cluster.stop_broker(3)
        await rig.admin.session.set_data(path, data)
        try:
            await rig.cluster.start_broker(3)
        except ZnodeDecodeError as e:
            assert bad and e.path == path, e
        else:
            assert not bad, "a broker started with an unreadable cluster id"
        await rig.admin.session.set_data(path, original)
        if not any(s.broker_id == 3 for s in rig.cluster.running_brokers()):
            await rig.cluster.start_broker(3)

    rig.run(restart())
    rig.run(rig.alive())


@given(data=bad_data(PRODUCER_ID_BLOCK))
@FUZZ
def test_latest_producer_id_block(rig: Rig, data: bytes) -> None:
    """Read when a broker claims a block of producer ids: one it cannot read fails that claim (the request gets
    an error) naming the node, and the next claim, once the node is fixed, succeeds."""
    from zkcontroller.broker.producer_ids import ProducerIdManager

    path = paths.LATEST_PRODUCER_ID_BLOCK
    # Written over the node each broker creates (null data, version 0): empty data is a block Kafka cannot parse.
    bad = refused(lambda: ProducerIdBlockZNode.decode(data, path))
    manager = ProducerIdManager(1, lambda: rig.admin)

    async def claim() -> None:
        await rig.write(path, data)
        try:
            await manager.generate_producer_id()
        except ZnodeDecodeError as e:
            assert bad and e.path == path, e
        except Exception as e:  # anything else must be a clear failure too
            assert path in str(e) or "Exhausted" in str(e) or "exhausted" in str(e), repr(e)
        else:
            assert not bad
        await rig.admin.session.delete(path)
        assert await manager.generate_producer_id() >= 0

    rig.run(claim())


async def _delete_if_present(rig: Rig, path: str) -> None:
    with contextlib.suppress(NoNodeError):
        await rig.admin.session.delete(path)


def _absent(rig: Rig, path: str) -> Callable[[], Awaitable[bool]]:
    async def gone() -> bool:
        return await rig.admin.session.exists(path) is None

    return gone


async def _led_victim(rig: Rig, prefix: str) -> str:
    """A new one-partition topic, once it has a leader."""
    topic = rig.name(prefix)
    tp = TopicPartition(topic, 0)
    await rig.admin.create_topic_assignment(topic, None, {tp: ReplicaAssignment((1, 2))})

    def led() -> bool:
        active = rig.cluster.active_controller()
        return active is not None and tp in active.context.partitions_with_leaders

    await wait_until(led, what=f"{topic} led")
    return topic


NOTIFICATION_PARENTS = {
    paths.ISR_CHANGE_NOTIFICATION: PARTITIONS,
    paths.LOG_DIR_EVENT_NOTIFICATION: LOG_DIR_EVENT,
    paths.CONFIG_CHANGES: CONFIG_CHANGE,
}


@given(parent=st.sampled_from(sorted(NOTIFICATION_PARENTS)),
       name=st.one_of(_ZK_NAME, st.sampled_from(["isr_change_", "log_dir_event_", "config_change_", "isr_change_x",
                                                 "config_change_-1", "log_dir_event_99999999999999999999"])))
@FUZZ
def test_notification_child_name(rig: Rig, caplog: pytest.LogCaptureFixture, parent: str, name: str) -> None:
    """A child of a notification parent not named as a sequential notification, then a real notification: the
    real one is still handled (deleted, for ISR changes and log-dir events, once read)."""
    rig.run(rig.alive())
    path = f"{parent}/{name}"
    try:
        rig.run(rig.write(path, NOTIFICATION_PARENTS[parent]))
    except BadArgumentsError:
        assume(False)  # not a name ZooKeeper takes
    good = rig.run(rig.admin.session.create(
        {paths.ISR_CHANGE_NOTIFICATION: paths.isr_change_path(), paths.LOG_DIR_EVENT_NOTIFICATION:
         paths.log_dir_event_path(), paths.CONFIG_CHANGES: paths.config_change_path()}[parent],
        NOTIFICATION_PARENTS[parent], CreateMode.PERSISTENT_SEQUENTIAL))
    check(rig, caplog, path, False)
    if parent != paths.CONFIG_CHANGES:
        rig.run(wait_until(_absent(rig, good), timeout_s=10.0, what=f"{good} handled and deleted"))
    rig.run(_delete_if_present(rig, path))


@given(data=bad_data(TOPIC))
@FUZZ
def test_deleting_an_unreadable_topic(rig: Rig, caplog: pytest.LogCaptureFixture, data: bytes) -> None:
    """A deletion request for a topic whose znode the controller could not read: whatever it does with the topic,
    the request does not stay and the rest of the cluster is served. (Data that does decode is a topic like any
    other: with a replica on a broker that is not running, its deletion waits for that broker, as in Kafka.)"""
    path = paths.topic_path(rig.name("unreadable"))
    topic = path.rsplit("/", 1)[-1]
    bad = refused(lambda: TopicZNode.decode(data, path))
    rig.run(rig.write(path, data))
    check(rig, caplog, path, bad)
    rig.run(rig.write(paths.delete_topic_path(topic), b""))
    rig.run(rig.alive())
    if bad:
        rig.run(wait_until(_absent(rig, paths.delete_topic_path(topic)), timeout_s=10.0, what="the request handled"))


@given(data=bad_data(CONTROLLER))
@settings(FUZZ, max_examples=max(EXAMPLES // 2, 1))
def test_controller_created_by_another_client(rig: Rig, caplog: pytest.LogCaptureFixture, data: bytes) -> None:
    """``/controller`` created by a client that is not a broker (after the controller's node went): unreadable,
    it is no controller (Kafka's ``getControllerId`` of unparsable data) and is reported; nobody can be elected
    while that client's node is there (as in Kafka), and one is as soon as it goes."""
    path = paths.CONTROLLER
    bad = refused(lambda: ControllerZNode.decode(data, path))
    assume(bad)

    async def trigger() -> None:
        await rig.cluster.wait_for_controller(timeout_s=20.0)
        await rig.admin.session.delete(path)
        try:
            await rig.admin.session.create(path, data, CreateMode.EPHEMERAL)
        except NodeExistsError:
            assume(False)  # a broker won the election first: nothing unreadable to see
        await wait_until(reported(caplog, path), timeout_s=10.0, what=f"a WARN/ERROR line naming {path}")
        await rig.admin.session.delete(path)

    rig.run(trigger())
    check(rig, caplog, path, bad)
