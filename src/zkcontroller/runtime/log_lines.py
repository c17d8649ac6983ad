"""Writing a finished Kafka-format log line cheaply: the controller and the brokers log tens of thousands of lines
per event at scale, and a LogRecord per line is a measurable cost. Low in the layers so both may use it."""

from __future__ import annotations

import logging

TRACE = 5
"""log4j's TRACE, below Python's DEBUG: Kafka's finest level, named here once for every layer above."""
logging.addLevelName(TRACE, "TRACE")

KAFKA_LEVEL_NAMES = {TRACE: "TRACE", logging.DEBUG: "DEBUG", logging.INFO: "INFO", logging.WARNING: "WARN",
                     logging.ERROR: "ERROR", logging.CRITICAL: "FATAL"}
"""Python's levels by log4j's names (``WARN``, ``FATAL``), as Kafka's layout prints them."""


def kafka_level_name(levelno: int) -> str:
    """The level as Kafka's log4j layout prints it: ``WARN`` where Python says ``WARNING``, ``FATAL`` for
    ``CRITICAL``; any other level by Python's name for it."""
    return KAFKA_LEVEL_NAMES.get(levelno) or logging.getLevelName(levelno)


class KafkaLevelFormatter(logging.Formatter):
    """A `logging.Formatter` whose ``%(levelname)s`` is Kafka's level name (`kafka_level_name`), for a handler
    that prints every logger's records, ours and third-party ones (``asyncio``) alike. Python's own names stay as
    they are (renaming WARNING with ``addLevelName`` would change them for every library that reads them), and
    so does the record: other handlers see ``WARNING``."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        python_level = record.levelname
        record.levelname = kafka_level_name(record.levelno)
        try:
            return super().formatMessage(record)
        finally:
            record.levelname = python_level


def python_name(e: BaseException) -> str:
    """The exception class's dotted Python name, as a Python traceback's last line spells it."""
    return f"{type(e).__module__}.{type(e).__qualname__}"


def qualified_name(e: BaseException) -> str:
    """The exception class's dotted name, where Kafka's lines name a Java class: the Java class Kafka throws in
    its place when the class names one in ``java_class`` (``kafka.common.StateChangeFailedException``), so a
    Kafka-format log never shows a Python module path for a failure Kafka has; else the Python name."""
    java = getattr(type(e), "java_class", None)
    return java if isinstance(java, str) else python_name(e)


def exception_line(e: BaseException) -> str:
    """An exception as the line under a Kafka log line that stands for its Java throwable: the class's dotted
    name and the message (``java.io.IOException: Connection to 127.0.0.1:9093 (id: 3 rack: null) failed.``),
    which a reader of Kafka logs, and `zkcontroller analyze`, takes for the throwable's first line."""
    return f"{qualified_name(e)}: {e}"


def java_traceback(text: str, e: BaseException | None) -> str:
    """A formatted Python traceback of ``e`` with the exception lines of every exception in its chain that names
    a ``java_class`` spelt with that Java name (``kafka.common.StateChangeFailedException: Failed to ...``), as
    Kafka's log4j prints a throwable's first line."""
    seen: set[int] = set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        java = qualified_name(e)
        python = python_name(e)
        if java != python:
            text = "\n".join(java + line[len(python):] if line == python or line.startswith(python + ":") else line
                             for line in text.split("\n"))
        e = e.__cause__ or e.__context__
    return text


def write_line(logger: logging.Logger, level: int, line: str, exc: BaseException | None = None) -> None:
    """Log the finished ``line`` (the caller checked ``logger.isEnabledFor(level)``). When the logger's one handler
    is a log file's (`cluster.logs`), the line is written without a LogRecord."""
    if exc is None and not logger.propagate and not logger.filters and len(logger.handlers) == 1:
        write_direct = getattr(logger.handlers[0], "write_direct", None)
        if write_direct is not None and write_direct(logger.name, level, line):
            return
    logger.log(level, line, exc_info=exc)
