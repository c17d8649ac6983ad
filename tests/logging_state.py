"""Process-wide logging state for tests that run logging set-up in this process (a CLI command in-process, a
broker's `configure_logging`): `logging_restored` puts it back. The `restored_logging` fixture is this for one
test; a session fixture that runs the CLI (the analytics `analyzed` log sets run `demo`) uses it directly, since the
per-test guard (`_no_logger_level_left`) snapshots after session fixtures are set up and cannot see them."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator


def logging_state() -> list[tuple[logging.Logger, int, bool, list[logging.Handler]]]:
    loggers = [logging.getLogger(), *(logger for logger in list(logging.root.manager.loggerDict.values())
                                      if isinstance(logger, logging.Logger))]
    return [(logger, logger.level, logger.propagate, list(logger.handlers)) for logger in loggers]


@contextlib.contextmanager
def logging_restored() -> Iterator[None]:
    """For a test that runs process-wide logging set-up in this process (a CLI command's `basicConfig`, the
    broker's `configure_logging`): every logger's handlers, level and propagation, and the handlers' levels, are
    put back afterwards (pytest's own capture handlers too, which `basicConfig(force=True)` takes off the root),
    a logger it created is put back as created (level NOTSET, propagating: ``kazoo``, which the broker's set-up
    sets to WARNING), and handlers it added are closed. Left behind, the broker's root handler formatted every
    later test's records in Kafka's layout (its formatter once renamed their level to WARN, which the tests' caplog
    then saw)."""
    saved = logging_state()
    handler_levels = {handler: handler.level for _, _, _, handlers in saved for handler in handlers}
    try:
        yield
    finally:
        _restore(saved, handler_levels)


def _restore(saved: list[tuple[logging.Logger, int, bool, list[logging.Handler]]],
             handler_levels: dict[logging.Handler, int]) -> None:
    for logger, _, _, handlers in logging_state():
        for handler in handlers:
            # pytest's own capture handlers: on each non-propagating logger for each phase of a test
            if handler not in handler_levels and not type(handler).__module__.startswith("_pytest"):
                logger.removeHandler(handler)
                handler.close()
    known = {logger for logger, _, _, _ in saved}
    for logger, _, _, _ in logging_state():
        if logger not in known:  # created by the set-up (``kazoo`` was a placeholder before): as created
            logger.setLevel(logging.NOTSET)
            logger.propagate = True
    for logger, level, propagate, handlers in saved:
        logger.handlers[:] = handlers
        logger.setLevel(level)
        logger.propagate = propagate
    for handler, level in handler_levels.items():
        handler.setLevel(level)
