"""Shared fixtures: the coordination backends every contract test runs on, and a session of the test's own.

``backend`` is parametrized over the embedded store and a real ZooKeeper server. The server is started once
per test session on a free loopback port (Debian's ``zookeeper`` package); each test gets its own chroot, so
tests never see each other's nodes. Without an installed server the ZooKeeper variant is skipped, saying so.
"""

from __future__ import annotations

import itertools
import logging
import os
import signal
import threading
import time
from collections.abc import AsyncIterator, Iterator

import pytest
from hypothesis import HealthCheck, settings
from tests import asyncio_timeout
from tests.helpers import OffsetClock, tool_missing
from tests.logging_state import logging_restored, logging_state

from zkcontroller.cluster.logs import KafkaFormatter
from zkcontroller.cluster.zookeeper_server import ZooKeeperNotInstalled, ZooKeeperServerProcess
from zkcontroller.coordination.api import CoordinationSession
from zkcontroller.coordination.backend import CoordinationBackend
from zkcontroller.coordination.embedded_backend import EmbeddedBackend
from zkcontroller.coordination.kazoo_backend import ZooKeeperBackend
from zkcontroller.coordination.kazoo_store import KazooSession
from zkcontroller.runtime import gc_freeze
from zkcontroller.runtime.clock import wall_clock_ms

_chroots = itertools.count()

# Hypothesis's per-example deadline (200 ms) is a wall-clock pass/fail: on this shared 2-core host an example
# took 281 ms under load and failed a test that proves nothing about time. No deadline, and no too-slow check.
settings.register_profile("zkcontroller", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("zkcontroller")

# Freezing (`runtime/gc_freeze.py`) counts the sections of every test in the process and would freeze in whichever
# test crossed 100,000 objects: a test that checks with gc.collect() that a cycle was freed (weakrefs, unretrieved
# task exceptions) could then fail for a reason of its own. Off in this process (subprocesses keep the default);
# tests/unit/test_gc_freeze.py turns it on for itself.
gc_freeze.ENABLED = False


@pytest.fixture(scope="session")
def zookeeper_server() -> Iterator[ZooKeeperServerProcess]:
    """A real ZooKeeper 3.8 server for the whole test session."""
    server = ZooKeeperServerProcess()
    try:
        server.start()
    except ZooKeeperNotInstalled as e:
        tool_missing("zookeeper", str(e))
    yield server
    server.cleanup()


@pytest.fixture(params=["embedded", "zookeeper"])
async def backend(request: pytest.FixtureRequest) -> AsyncIterator[CoordinationBackend]:
    """A fresh, isolated store: a new embedded server, or a new chroot on the real server."""
    if request.param == "embedded":
        b: CoordinationBackend = EmbeddedBackend(OffsetClock(wall_clock_ms))
    else:
        server: ZooKeeperServerProcess = request.getfixturevalue("zookeeper_server")
        b = ZooKeeperBackend(server.connect_string, f"/test-{os.getpid()}-{next(_chroots)}")
    yield b
    await b.close()


@pytest.fixture
async def session(backend: CoordinationBackend) -> AsyncIterator[CoordinationSession]:
    """A new session on ``backend``, apart from any a cluster under test opens; closed when the test ends."""
    s = await backend.new_session()
    yield s
    await s.close()


UNREACHABLE_CONNECT_TIMEOUT_S = 1.0
"""How long a test that points a command at a ZooKeeper nobody listens on lets it try to connect."""


@pytest.fixture
def unreachable_zookeeper_gives_up_soon(monkeypatch: pytest.MonkeyPatch) -> None:
    """For a test whose command must fail to reach ZooKeeper: in this process, a connection attempt gives up
    after ``UNREACHABLE_CONNECT_TIMEOUT_S`` instead of the 15 s a real command waits (a refused connection is
    retried until then), so the failure path runs without waiting out the production bound."""
    connect = KazooSession.connect.__func__  # type: ignore[attr-defined]
    monkeypatch.setattr(connect, "__kwdefaults__",
                        {**connect.__kwdefaults__, "connect_timeout_s": UNREACHABLE_CONNECT_TIMEOUT_S})


def _kazoo_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if "zk_loop" in t.name or "kazoo" in t.name.lower()]


@pytest.fixture(autouse=True, scope="module")
def no_kazoo_client_outlives_its_module() -> Iterator[None]:
    """Every kazoo client a test module opens is closed by the end of the module (its backend's ``close``
    closes abandoned sessions). A leaked one pings and reconnects for the rest of the run, drawing jitter from
    the process-wide ``random`` — which Hypothesis then reports, wrongly, against whatever property test is
    generating data at that moment."""
    before = set(_kazoo_threads())
    yield
    deadline = time.monotonic() + 10  # stop_kazoo_client runs in a worker thread; give it a bounded moment
    while (leaked := sorted(set(_kazoo_threads()) - before)) and time.monotonic() < deadline:
        time.sleep(0.05)  # polling a condition with a bound
    assert not leaked, f"kazoo connection threads still running after the module: {leaked}"


def _logging_state() -> list[tuple[logging.Logger, int, bool, list[logging.Handler]]]:
    return logging_state()


@pytest.fixture
def restored_logging() -> Iterator[None]:
    """`logging_restored` (tests/logging_state.py) around one test."""
    with logging_restored():
        yield


def _logger_levels() -> dict[logging.Logger, int]:
    return {logger: level for logger, level, _, _ in _logging_state()}


@pytest.fixture(autouse=True)
def _no_logger_level_left() -> Iterator[None]:
    """A test must not leave any logger's level changed (`restored_logging` puts back what process-wide set-up
    changes; caplog's ``set_level`` restores its own): a broker's `configure_logging` left ``kazoo`` at WARNING,
    and every later test in the process lost kazoo's INFO records. The levels are put back so the next test starts
    clean, and the test fails naming them."""
    before = _logger_levels()
    yield
    changed = {logger: (before.get(logger, logging.NOTSET), level) for logger, level in _logger_levels().items()
               if level != before.get(logger, logging.NOTSET)}
    for logger, (was, _) in changed.items():
        logger.setLevel(was)
    if changed:
        pytest.fail("the test left logger levels changed: " + ", ".join(
            f"{logger.name!r} {logging.getLevelName(was)} -> {logging.getLevelName(now)}"
            for logger, (was, now) in sorted(changed.items(), key=lambda item: item[0].name)))


def _kafka_layout_handlers() -> list[tuple[logging.Logger, logging.Handler]]:
    return [(logger, handler) for logger, _, _, handlers in _logging_state() for handler in handlers
            if isinstance(handler.formatter, KafkaFormatter)]


@pytest.fixture(autouse=True)
def _no_kafka_layout_handler_left() -> Iterator[None]:
    """A test must not leave a handler in Kafka's layout on any logger (`cluster.logs.LogFiles` not closed, a
    broker's logging set up in-process): it would write every later test's Kafka lines to a file or stream of
    that test, and once rewrote their records' level. The handler is removed so the next test starts clean."""
    before = {(id(logger), id(handler)) for logger, handler in _kafka_layout_handlers()}
    yield
    left = [(logger, handler) for logger, handler in _kafka_layout_handlers()
            if (id(logger), id(handler)) not in before]
    for logger, handler in left:
        logger.removeHandler(handler)
        handler.close()
    if left:
        pytest.fail("the test left a handler in Kafka's layout attached: "
                    + ", ".join(f"{handler!r} on {logger.name!r}" for logger, handler in left))


_terminated = False
"""This test run got SIGTERM (`timeout`, CI's cancel)."""
KILLED_EXIT = 128 + signal.SIGTERM
"""The run's exit status once terminated, whatever the tests did: a shell's for a process SIGTERM ended."""
_STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def _on_sigterm(signum: int, frame: object) -> None:
    global _terminated
    _terminated = True
    raise KeyboardInterrupt("SIGTERM")


def pytest_configure(config: pytest.Config) -> None:
    """SIGTERM ends the run as interrupted and never as passed. Without a handler the process died at once (no
    summary); but a command run in-process (`zkcontroller.cli`) turned it into a KeyboardInterrupt it caught
    itself (``stopped``), and before its handlers were put back after it, the rest of the run did too: a run
    killed by ``timeout`` went on, and a pytest of its own could end 0. The handler notes it, and both the next
    test's end (`_signal_handlers_kept`) and the session's end make the exit status `KILLED_EXIT`.

    pytest-timeout's timeout ends an asyncio test as a timeout (`tests/asyncio_timeout.py`), where a task would
    otherwise keep it and the test run on."""
    signal.signal(signal.SIGTERM, _on_sigterm)
    config.pluginmanager.register(asyncio_timeout, "zkcontroller-asyncio-timeout")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _terminated:
        session.exitstatus = KILLED_EXIT


@pytest.fixture(autouse=True)
def _signal_handlers_kept() -> Iterator[None]:
    """A test must not leave a stop signal's handler changed (a command run in-process installing its own): the
    handlers are put back and the test fails naming them. A run terminated during the test stops here."""
    before = {sig: signal.getsignal(sig) for sig in _STOP_SIGNALS}
    yield
    if _terminated:
        pytest.exit("terminated by SIGTERM", returncode=KILLED_EXIT)
    changed = [sig for sig, handler in before.items() if signal.getsignal(sig) is not handler]
    for sig in changed:
        signal.signal(sig, before[sig] if before[sig] is not None else signal.SIG_DFL)
    if changed:
        pytest.fail("the test left stop signal handlers changed: " + ", ".join(sig.name for sig in changed))
