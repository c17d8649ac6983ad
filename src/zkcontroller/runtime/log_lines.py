"""Writing a finished Kafka-format log line cheaply: the controller and the brokers log tens of thousands of lines
per event at scale, and a LogRecord per line is a measurable cost. Low in the layers so both may use it."""

from __future__ import annotations

import logging


def write_line(logger: logging.Logger, level: int, line: str, exc: BaseException | None = None) -> None:
    """Log the finished ``line`` (the caller checked ``logger.isEnabledFor(level)``). When the logger's one handler
    is a log file's (`cluster.logs`), the line is written without a LogRecord."""
    if exc is None and not logger.propagate and not logger.filters and len(logger.handlers) == 1:
        write_direct = getattr(logger.handlers[0], "write_direct", None)
        if write_direct is not None and write_direct(logger.name, level, line):
            return
    logger.log(level, line, exc_info=exc)
