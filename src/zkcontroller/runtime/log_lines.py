"""Writing a finished Kafka-format log line cheaply: the controller and the brokers log tens of thousands of lines
per event at scale, and a LogRecord per line is a measurable cost. Low in the layers so both may use it."""

from __future__ import annotations

import logging

TRACE = 5
"""log4j's TRACE, below Python's DEBUG: Kafka's finest level, named here once for every layer above."""
logging.addLevelName(TRACE, "TRACE")


def qualified_name(e: BaseException) -> str:
    """The exception class's dotted name, where Kafka's lines name a Java class (``a.b.SomeError``)."""
    return f"{type(e).__module__}.{type(e).__qualname__}"


def exception_line(e: BaseException) -> str:
    """An exception as the line under a Kafka log line that stands for its Java throwable: the class's dotted
    name and the message (``zkcontroller.protocol.transport.BrokerUnreachableError: broker 3 is not reachable``),
    which a reader of Kafka logs, and `zkcontroller analyze`, takes for the throwable's first line."""
    return f"{qualified_name(e)}: {e}"


def write_line(logger: logging.Logger, level: int, line: str, exc: BaseException | None = None) -> None:
    """Log the finished ``line`` (the caller checked ``logger.isEnabledFor(level)``). When the logger's one handler
    is a log file's (`cluster.logs`), the line is written without a LogRecord."""
    if exc is None and not logger.propagate and not logger.filters and len(logger.handlers) == 1:
        write_direct = getattr(logger.handlers[0], "write_direct", None)
        if write_direct is not None and write_direct(logger.name, level, line):
            return
    logger.log(level, line, exc_info=exc)
