"""BROKER_LOGGER changes from IncrementalAlterConfigs (Kafka 2.8.2's ``ZkAdminManager.validateLogLevelConfigs``
and ``alterLogLevelConfigs`` over ``Log4jController``), on Python's loggers: Kafka sets a log4j logger's level,
here the Python logger of that name (this project's loggers carry Kafka's names, ``kafka.server.KafkaApis``...).

A logger exists when Python has created it (log4j's ``LogManager.exists``: a placeholder parent is none), or
is ``root``. SET takes one of Kafka's six level names, spelt as Kafka spells them (TRACE maps to a level below
DEBUG, FATAL to CRITICAL, WARN to WARNING); DELETE unsets the level, so the logger inherits its parent's again,
and may not touch ``root``; APPEND and SUBTRACT are refused.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from zkcontroller.admin.admin_manager_log import AdminManagerLog
from zkcontroller.admin.zk_admin_manager import InvalidConfigValue, invalid_request
from zkcontroller.protocol.wire.alter_configs import APPEND, DELETE, SET, SUBTRACT, ConfigChange
from zkcontroller.runtime.log_lines import TRACE

ROOT_LOGGER = "root"
VALID_LOG_LEVELS = ("TRACE", "ERROR", "INFO", "FATAL", "DEBUG", "WARN")
"""``LogLevelConfig.VALID_LOG_LEVELS``, in its Java HashSet's order (what Kafka's message lists)."""
PYTHON_LEVELS = {"TRACE": TRACE, "DEBUG": logging.DEBUG, "INFO": logging.INFO, "WARN": logging.WARNING,
                 "ERROR": logging.ERROR, "FATAL": logging.CRITICAL}


def _existing(name: str) -> logging.Logger | None:
    if name == ROOT_LOGGER:
        return logging.getLogger()
    found = logging.Logger.manager.loggerDict.get(name)
    return found if isinstance(found, logging.Logger) else None


def validate_log_levels(changes: Sequence[ConfigChange]) -> None:
    """``validateLogLevelConfigs``: raises `InvalidConfigValue` (ConfigException) or `ConfigApiError`."""
    for change in changes:
        name = change.name
        if change.op in (SET, DELETE) and _existing(name) is None:
            raise InvalidConfigValue(f"Logger {name} does not exist!")
        if change.op == SET and change.value not in VALID_LOG_LEVELS:
            raise InvalidConfigValue(f"Cannot set the log level of {name} to {change.value} as it is not a supported "
                                     f"log level. Valid log levels are {', '.join(VALID_LOG_LEVELS)}")
        if change.op == DELETE and name == ROOT_LOGGER:
            raise invalid_request(f"Removing the log level of the {ROOT_LOGGER} logger is not allowed")
        if change.op in (APPEND, SUBTRACT):
            op = "APPEND" if change.op == APPEND else "SUBTRACT"
            raise invalid_request(f"{op} operation is not allowed for the BROKER_LOGGER resource")


def alter_log_levels(changes: Sequence[ConfigChange], log: AdminManagerLog) -> None:
    """``alterLogLevelConfigs``, after `validate_log_levels`; ``log``: the broker's ZkAdminManager logger."""
    for change in changes:
        logger = _existing(change.name)
        assert logger is not None
        if change.op == SET:
            assert change.value is not None
            log.info("Updating the log level of %s to %s", change.name, change.value)
            logger.setLevel(PYTHON_LEVELS[change.value])
        else:
            log.info("Unset the log level of %s", change.name)
            logger.setLevel(logging.NOTSET)
