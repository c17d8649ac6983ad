"""A session expiry under the controller, as Kafka 2.8 handles it: the ZooKeeperClient's
``beforeInitializingSession`` has the controller ``clearAndPut(Expire)``, so the events the lost session queued
are dropped (never run on it), the controller resigns, and ``afterInitializingSession`` re-registers the broker and
re-elects. An event already running when the session dies fails once, with one line, and the controller goes on.

The race these tests pin down: the event in flight is woken by the expiry (its request fails) in the same loop step
that tells the broker's session listener. If the queue is cleared any later (it was, in a task the listener
spawned), the event thread took the next queued event of the lost session first, and the next: on a real
ZooKeeper each failed at once on the dead session, one "Error processing event ... SESSION_EXPIRED" traceback each.
"""

from __future__ import annotations

import asyncio
import logging
import random
from dataclasses import dataclass

import pytest
from tests.helpers import wait_until
from tests.integration.conftest import ClusterFactory

from zkcontroller.admin.topics import TopicAdmin
from zkcontroller.cluster.local_cluster import LocalCluster
from zkcontroller.controller.event_log import CONTROLLER_LOGGER
from zkcontroller.controller.event_manager import log as event_thread_log
from zkcontroller.controller.events import (
    ConfigChangeNotification,
    ControllerChange,
    ControllerEvent,
    Expire,
    PartitionModifications,
)
from zkcontroller.controller.kafka_controller import KafkaController
from zkcontroller.coordination.api import SessionState, Watcher
from zkcontroller.coordination.backend import CoordinationBackend
from zkcontroller.coordination.embedded_backend import EmbeddedBackend
from zkcontroller.coordination.errors import ConnectionLossError
from zkcontroller.coordination.reconnecting import ReconnectingSession
from zkcontroller.zk import paths
from zkcontroller.zk.kafka_zk_client import KafkaZkClient


@dataclass(frozen=True)
class InFlight(ControllerEvent):
    """A test event whose handler makes one store request that the expiry catches in flight."""


def controller_of(cluster: LocalCluster, broker_id: int) -> KafkaController:
    controller = cluster.brokers[broker_id].controller
    assert controller is not None
    return controller


def idle_and_active(controller: KafkaController) -> bool:
    events = controller.event_manager
    return controller.is_active and events.queue_size == 0 and events.state.name == "IDLE"


def recorded_events(controller: KafkaController) -> list[ControllerEvent]:
    """The events ``controller`` processes from now on, in order (its ``process`` wrapped)."""
    ran: list[ControllerEvent] = []
    process = controller.process

    async def recording(event: ControllerEvent) -> None:
        ran.append(event)
        await process(event)

    controller.process = recording  # type: ignore[method-assign]
    return ran


def assert_only_the_running_event_failed(ran: list[ControllerEvent], queued: list[ControllerEvent],
                                         caplog: pytest.LogCaptureFixture) -> None:
    """None of ``queued`` ran, Expire came right after the running InFlight, whose SESSION_EXPIRED is the one
    controller error line."""
    assert not [event for event in ran if any(event is q for q in queued)], ran
    after = ran[ran.index(next(e for e in ran if isinstance(e, InFlight))) + 1:]
    assert isinstance(after[0], Expire), after
    errors = controller_lines(caplog)
    assert len(errors) == 1 and errors[0].startswith("[Controller id=1] Error processing event InFlight"), errors
    assert "SESSION_EXPIRED" in errors[0], errors


def controller_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    """What went to controller.log at ERROR, each with its exception's one-line form (SESSION_EXPIRED shows)."""
    return [f"{r.getMessage()} {r.exc_info[1]!r}" if r.exc_info else r.getMessage() for r in caplog.records
            if r.name in (CONTROLLER_LOGGER, event_thread_log.name) and r.levelno >= logging.ERROR]


async def test_events_the_lost_session_queued_are_dropped_not_run_on_it(
        make_cluster: ClusterFactory, admin: KafkaZkClient, caplog: pytest.LogCaptureFixture) -> None:
    cluster = await make_cluster([1])
    await TopicAdmin(admin, random.Random(1)).create_topic("t", 1, 1)
    controller = controller_of(cluster, 1)
    await wait_until(lambda: idle_and_active(controller) and "t" in controller.context.all_topics,
                     what="the controller's failover and the topic's creation processed")
    epoch = controller.context.epoch
    broker_epoch = controller.broker_epoch
    zk = controller.zk
    session = zk.session
    assert isinstance(session, ReconnectingSession)
    inner = session.inner

    # The in-flight event: a request the expiry catches. On the embedded store the request is between its round
    # trip and its answer when the session ends; on ZooKeeper the connection drops under it (kazoo answers a
    # pending request CONNECTIONLOSS, as this stand-in does) and the retry waits for the session's next state.
    held, release = asyncio.Event(), asyncio.Event()
    if not isinstance(cluster.backend, EmbeddedBackend):
        dropped = asyncio.Event()
        inner.add_session_listener(lambda state: dropped.set() if state is SessionState.DISCONNECTED else None)

        async def pending_at_the_drop(path: str, watch: Watcher | None = None) -> None:
            del inner.exists  # type: ignore[attr-defined]  # the retry goes to the real session
            await dropped.wait()
            raise ConnectionLossError(path)

        inner.exists = pending_at_the_drop  # type: ignore[method-assign]

    async def in_flight(_event: InFlight) -> None:
        held.set()
        await release.wait()
        await zk.session.exists("/controller")

    controller._handlers[InFlight] = in_flight  # type: ignore[assignment]
    ran = recorded_events(controller)

    controller.event_manager.put(InFlight())
    await asyncio.wait_for(held.wait(), 10)
    # What the lost session's watches and the tenure queued behind it (a /controller change, a topic's partitions,
    # a config change notification): none of them may run on the dead session
    queued: list[ControllerEvent] = [ControllerChange(), PartitionModifications(topic="t"), ConfigChangeNotification()]
    for event in queued:
        controller.event_manager.put(event)
    with caplog.at_level(logging.INFO, CONTROLLER_LOGGER), caplog.at_level(logging.INFO, event_thread_log.name):
        release.set()
        await cluster.expire_broker_session(1)  # on the embedded store the session ends before this returns
        await wait_until(lambda: controller.broker_epoch != broker_epoch and controller.context.epoch > epoch
                         and controller.is_active, what="the broker registered again and re-elected itself")

    assert_only_the_running_event_failed(ran, queued, caplog)
    lines = [r.getMessage() for r in caplog.records if r.name == CONTROLLER_LOGGER]
    resigned = lines.index("[Controller id=1] Resigned")
    assert any("successfully elected as the controller" in line for line in lines[resigned:]), lines


async def test_a_session_expiry_mid_failover_ends_it_with_one_line_and_no_back_off(
        make_cluster: ClusterFactory, admin: KafkaZkClient, caplog: pytest.LogCaptureFixture) -> None:
    """A failover the expiry cuts short: one "Error while electing or becoming controller" line, then Expire at once.
    It used to wait out the failover back-off on the dead session (here a minute, past this test's bound) before
    Expire could run, then fail again trying to move a controller the dead session no longer held."""
    cluster = await make_cluster([1], failover_retry_backoff_ms=60_000, failover_retry_backoff_max_ms=60_000)
    controller = controller_of(cluster, 1)
    await wait_until(lambda: idle_and_active(controller), what="the first failover")
    epoch = controller.context.epoch
    broker_epoch = controller.broker_epoch
    begin = controller.tenure.begin

    async def failover_under_an_expiry() -> None:
        controller.tenure.begin = begin  # type: ignore[method-assign]  # once: the next tenure's is a real one
        await cluster.expire_broker_session(1)
        await wait_until(lambda: controller.zk.session.state is SessionState.EXPIRED, what="the session expired")
        await begin()

    controller.tenure.begin = failover_under_an_expiry  # type: ignore[method-assign]
    with caplog.at_level(logging.INFO, CONTROLLER_LOGGER), caplog.at_level(logging.INFO, event_thread_log.name):
        await admin.session.delete(paths.CONTROLLER)  # Reelect: the controller wins again and fails over
        await wait_until(lambda: controller.broker_epoch != broker_epoch and controller.context.epoch >= epoch + 2
                         and controller.is_active, what="the broker registered again and re-elected itself")

    errors = controller_lines(caplog)
    assert len(errors) == 1, errors
    assert errors[0].startswith("[Controller id=1] Error while electing or becoming controller on broker 1."), errors
    assert "SESSION_EXPIRED" in errors[0], errors
    lines = [r.getMessage() for r in caplog.records if r.name == CONTROLLER_LOGGER]
    resigned = lines.index("[Controller id=1] Resigned", lines.index(errors[0].split(" SessionExpiredError")[0]))
    assert any(f"Epoch incremented to {epoch + 2}" in line for line in lines[resigned:]), lines


async def test_an_expiry_landing_in_the_round_trip_of_the_running_event_runs_none_of_the_lost_session_events(
        backend: CoordinationBackend, make_cluster: ClusterFactory, admin: KafkaZkClient,
        caplog: pytest.LogCaptureFixture) -> None:
    """The store ends the session (its ticker) while the running event's request is in its embedded round trip: the
    request fails first, and the session's listeners are told one loop step later. The event thread used to take
    the next queued event at once, before the listener cleared the queue: one event of the lost session ran on it
    (a second "Error processing event ... SESSION_EXPIRED"). Now it yields once after an event the expiry ended."""
    if not isinstance(backend, EmbeddedBackend):
        pytest.skip("the window is the embedded round trip; ZooKeeper's (a loss, then the expiry) is tested above")
    cluster = await make_cluster([1])
    await TopicAdmin(admin, random.Random(1)).create_topic("t", 1, 1)
    controller = controller_of(cluster, 1)
    await wait_until(lambda: idle_and_active(controller) and "t" in controller.context.all_topics,
                     what="the controller's failover and the topic's creation processed")
    broker_epoch = controller.broker_epoch
    zk = controller.zk
    session_id = zk.session.session_id
    release = asyncio.Event()

    async def in_flight(_event: InFlight) -> None:
        await release.wait()
        # the store's expiry runs in the loop step after this request's round trip began
        asyncio.get_running_loop().call_soon(backend.server.expire_session, session_id)
        await zk.session.exists("/controller")

    controller._handlers[InFlight] = in_flight  # type: ignore[assignment]
    ran = recorded_events(controller)
    controller.event_manager.put(InFlight())
    queued: list[ControllerEvent] = [ControllerChange(), PartitionModifications(topic="t")]
    for event in queued:
        controller.event_manager.put(event)
    with caplog.at_level(logging.INFO, CONTROLLER_LOGGER), caplog.at_level(logging.INFO, event_thread_log.name):
        release.set()
        await wait_until(lambda: controller.broker_epoch != broker_epoch and idle_and_active(controller),
                         what="the broker registered again and re-elected itself")

    assert_only_the_running_event_failed(ran, queued, caplog)


async def test_a_session_expiry_during_shutdown_does_not_leave_the_reinitialisation_waiting_for_good(
        make_cluster: ClusterFactory) -> None:
    """The session expires while the broker shuts down, after its controlled shutdown: Expire is queued behind a
    running event, then the controller's shutdown drops it unprocessed. The re-initialisation task waited for
    Expire's processing to begin, which never came: it hung (and, had it gone on, opened a session nobody closed)."""
    cluster = await make_cluster([1])
    server = cluster.brokers[1]
    controller = controller_of(cluster, 1)
    await wait_until(lambda: idle_and_active(controller), what="the first failover")
    held, release = asyncio.Event(), asyncio.Event()

    async def in_flight(_event: InFlight) -> None:
        held.set()
        await release.wait()

    controller._handlers[InFlight] = in_flight  # type: ignore[assignment]
    reinit: list[asyncio.Task[None]] = []

    async def expire_after_the_controlled_shutdown() -> None:
        controller.event_manager.put(InFlight())
        await asyncio.wait_for(held.wait(), 10)
        await cluster.expire_broker_session(1)
        await wait_until(lambda: server._reinit is not None, what="the re-initialisation started")
        assert server._reinit is not None and controller.event_manager.queue_size == 1  # Expire, queued
        reinit.append(server._reinit)
        release.set()  # the controller's shutdown comes before the event thread's next step

    await asyncio.wait_for(server.shutdown(stop_processing_requests=expire_after_the_controlled_shutdown), 20)
    await wait_until(lambda: reinit[0].done(), timeout_s=10, what="the re-initialisation task ended")
    assert server._reinit is None
