"""Log files laid out as Kafka's default log4j config writes them, plus the JSONL event log.

``state-change.log`` gets logger ``state.change.logger``; ``controller.log`` gets ``kafka.controller``;
``server.log`` gets the rest of Kafka's loggers (``kafka.*``, ``org.apache.kafka.*``) at INFO, as Kafka's root
appender does: the brokers' LeaderAndIsr, fetcher, ISR and log-dir lines. Lines of ours that Kafka has no
counterpart of carry our own logger names, so no reader takes them for Kafka's, and go to the file their
Kafka neighbours are in: ``zkcontroller.controller.*`` (e.g. the unclean elections with what they lose) to
``controller.log``, ``zkcontroller.broker.*`` (e.g. a malformed topic config) to ``server.log``. All use Kafka's layout
``[%d] %p %m (%c)%n`` with ``%d`` as ``yyyy-MM-dd HH:mm:ss,SSS``, so tools that read Kafka's logs (including our
analytics job) read ours. ``events.jsonl`` is the event-log contract.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from zkcontroller.cluster.line_writer import LineWriter, LineWriterHandler
from zkcontroller.controller.event_log import CONTROLLER_LOGGER, STATE_CHANGE_LOGGER, TRACE, EventLog
from zkcontroller.runtime.log_lines import java_traceback, kafka_level_name

KAFKA_LAYOUT = "[%(asctime)s] %(levelname)s %(message)s (%(name)s)"


class KafkaFormatter(logging.Formatter):
    """``[2026-11-22 05:30:01,123] INFO message (logger)``, times from ``clock`` when given (virtual time)."""

    def __init__(self, clock: Callable[[], int] | None = None) -> None:
        super().__init__(KAFKA_LAYOUT)
        self._clock = clock
        self._second = -1
        self._second_text = ""

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        return self._stamp(record.created)

    def _stamp(self, created: float) -> str:
        ms = self._clock() if self._clock is not None else int(created * 1000)
        second, millis = divmod(ms, 1000)
        if second != self._second:  # thousands of lines share a second when a broker fails: format it once
            self._second_text = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(second))
            self._second = second
        return f"{self._second_text},{millis:03d}"

    def format(self, record: logging.LogRecord) -> str:
        """Kafka's layout; a message's lines after its first (an exception's class and message, where Kafka's
        log4j prints the throwable) and a traceback follow the ``(logger)`` suffix, as Kafka's stack traces do. The
        record is not changed (its level stays WARNING for every other handler; only this line says WARN)."""
        text = self.line(record.name, record.levelno, record.getMessage(), record.created)
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            text += "\n" + record.exc_text
        if record.stack_info:
            text += "\n" + self.formatStack(record.stack_info)
        return text

    def formatException(self, ei: Any) -> str:
        """Python's traceback, with the exception's line naming the Java class Kafka throws in its place, if any
        (`java_traceback`): ``kafka.common.StateChangeFailedException: ...``, not our module path."""
        return java_traceback(super().formatException(ei), ei[1] if ei else None)

    def line(self, logger_name: str, levelno: int, message: str, created: float) -> str:
        """What `format` makes of a record with these fields and no exception, without a `LogRecord`
        (`LineWriterHandler.write_direct`)."""
        level = kafka_level_name(levelno)
        first, newline, rest = message.partition("\n")
        return f"[{self._stamp(created)}] {level} {first} ({logger_name}){newline}{rest}"


SERVER_LOGGERS = ("kafka", "org.apache.kafka", "org.apache.zookeeper")
"""Kafka's log4j.properties sets the first two to INFO, and its root appender writes ZooKeeper's client lines
(``org.apache.zookeeper.ClientCnxn``: a session that expired) to the same file; ``kafka.controller`` below them
keeps its own file and does not propagate (Kafka's ``additivity=false``), so controller lines are not
repeated in ``server.log``."""

OWN_CONTROLLER_LOGGERS = "zkcontroller.controller"
"""Our controller lines without a Kafka counterpart: in ``controller.log`` beside ``kafka.controller``'s."""
OWN_SERVER_LOGGERS = "zkcontroller.broker"
"""Our broker lines without a Kafka counterpart: in ``server.log`` beside the brokers' Kafka lines."""

MAX_LOG_BYTES = 100 * 1024 * 1024
MAX_LOG_BACKUPS = 10
"""Each log is capped at 100 MiB with 10 rolled files kept (``state-change.log.1`` ...), as the RollingFileAppender
in Confluent's packaging of Kafka's log4j.properties does (MaxFileSize=100MB, MaxBackupIndex=10). Kafka's own
file rolls hourly and never deletes; a size cap is what keeps a looping controller from filling the disk."""


def _jsonl_namer(default_name: str) -> str:
    """``events.jsonl.3`` -> ``events.3.jsonl``: rolled event logs keep the suffix the analytics job reads by."""
    stem, _, index = default_name.rpartition(".")
    base = stem.removesuffix(".jsonl")
    return f"{base}.{index}.jsonl" if index.isdigit() else default_name


class LogFiles:
    """Owns the open log files of one run; `close` detaches the handlers again. Every file rotates by size and
    is written through a `LineWriter` (flushed once per event-loop turn, see there)."""

    def __init__(self, log_dir: Path, clock: Callable[[], int] | None = None, *, trace: bool = False,
                 max_bytes: int = MAX_LOG_BYTES, backups: int = MAX_LOG_BACKUPS) -> None:
        log_dir.mkdir(parents=True, exist_ok=True)
        self.log_dir = log_dir
        formatter = KafkaFormatter(clock)
        self._handlers: list[tuple[logging.Logger, logging.Handler, int, bool]] = []
        for logger_name, file_name, level in (
            (STATE_CHANGE_LOGGER, "state-change.log", TRACE if trace else logging.INFO),
            ("kafka.controller", "controller.log", logging.INFO),
        ):
            handler = LineWriterHandler(LineWriter(log_dir / file_name, max_bytes=max_bytes, backups=backups))
            handler.setFormatter(formatter)
            names = (logger_name, OWN_CONTROLLER_LOGGERS) if file_name == "controller.log" else (logger_name,)
            for name in names:
                logger = logging.getLogger(name)
                self._handlers.append((logger, handler, logger.level, logger.propagate))
                logger.setLevel(level)
                logger.addHandler(handler)
                logger.propagate = False
        assert CONTROLLER_LOGGER.startswith("kafka.controller")
        server = LineWriterHandler(LineWriter(log_dir / "server.log", max_bytes=max_bytes, backups=backups))
        server.setFormatter(formatter)
        server.setLevel(logging.INFO)
        for logger_name in (*SERVER_LOGGERS, OWN_SERVER_LOGGERS):
            # Attached to each logger, not the root: the cluster prompt stops these loggers' propagation while it
            # shows their warnings. They keep propagating otherwise; the console's handler shows WARN and above.
            logger = logging.getLogger(logger_name)
            self._handlers.append((logger, server, logger.level, logger.propagate))
            if logger.getEffectiveLevel() > logging.INFO:
                logger.setLevel(logging.INFO)
            logger.addHandler(server)
        self._events = LineWriter(log_dir / "events.jsonl", max_bytes=max_bytes, backups=backups,
                                  namer=_jsonl_namer)
        self._event_logs: list[EventLog] = []
        """Every `event_log` handed out: `close` writes the lines each still holds (`EventLog.flush_soon` writes
        them a loop turn after the event, and a run stopped in that turn would lose them)."""

    def write_event(self, line: str) -> None:
        self._events.write(line)

    def write_events(self, lines: list[str]) -> None:
        """A step's lines at once (`EventLog.lines_sink`): one lock and, while the file has room, one write."""
        self._events.write_lines(lines)

    def event_log(self, cluster: str, clock: Callable[[], int]) -> EventLog:
        event_log = EventLog(cluster, clock, self.write_event, lines_sink=self.write_events)
        self._event_logs.append(event_log)
        return event_log

    def close(self) -> None:
        for event_log in self._event_logs:
            event_log.flush()
        for logger, handler, level, propagate in self._handlers:
            logger.removeHandler(handler)
            logger.setLevel(level)
            logger.propagate = propagate
        for handler in {handler for _, handler, _, _ in self._handlers}:
            handler.close()
        self._events.close()
