"""BROKER_LOGGER changes (`admin.log4j_controller`, Kafka 2.8.2's ``validateLogLevelConfigs`` and
``alterLogLevelConfigs``) on Python loggers: Kafka's refusals, and SET/DELETE taking effect."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from zkcontroller.admin.admin_manager_log import AdminManagerLog
from zkcontroller.admin.log4j_controller import alter_log_levels, validate_log_levels
from zkcontroller.admin.zk_admin_manager import ConfigApiError, InvalidConfigValue
from zkcontroller.protocol.wire.alter_configs import APPEND, DELETE, SET, SUBTRACT, ConfigChange

NAME = "kafka.test.Log4jControllerUnit"


@pytest.fixture
def logger() -> Iterator[logging.Logger]:
    made = logging.getLogger(NAME)
    made.setLevel(logging.NOTSET)
    yield made
    made.setLevel(logging.NOTSET)


def test_set_and_unset_a_level(logger: logging.Logger, caplog: pytest.LogCaptureFixture) -> None:
    changes = [ConfigChange(NAME, "TRACE", SET)]
    validate_log_levels(changes)
    log = AdminManagerLog(3)
    with caplog.at_level(logging.INFO, "kafka.server.ZkAdminManager"):
        alter_log_levels(changes, log)
        assert logger.level == 5 and logging.getLevelName(5) == "TRACE"
        alter_log_levels([ConfigChange(NAME, "WARN", SET)], log)
        assert logger.level == logging.WARNING
        alter_log_levels([ConfigChange(NAME, None, DELETE)], log)
        assert logger.level == logging.NOTSET  # inherits again
    assert [r.getMessage() for r in caplog.records if r.name == "kafka.server.ZkAdminManager"] == [
        f"[Admin Manager on Broker 3]: Updating the log level of {NAME} to TRACE",
        f"[Admin Manager on Broker 3]: Updating the log level of {NAME} to WARN",
        f"[Admin Manager on Broker 3]: Unset the log level of {NAME}"]


def test_kafkas_refusals(logger: logging.Logger) -> None:
    del logger
    with pytest.raises(InvalidConfigValue, match=r"^Logger kafka\.no\.such\.Logger does not exist!$"):
        validate_log_levels([ConfigChange("kafka.no.such.Logger", "INFO", SET)])
    with pytest.raises(InvalidConfigValue) as e:
        validate_log_levels([ConfigChange(NAME, "info", SET)])
    assert str(e.value) == (f"Cannot set the log level of {NAME} to info as it is not a supported log level. "
                            "Valid log levels are TRACE, ERROR, INFO, FATAL, DEBUG, WARN")
    with pytest.raises(ConfigApiError) as api:
        validate_log_levels([ConfigChange("root", None, DELETE)])
    assert (api.value.error, api.value.message) == (42, "Removing the log level of the root logger is not allowed")
    for op, name in ((APPEND, "APPEND"), (SUBTRACT, "SUBTRACT")):
        with pytest.raises(ConfigApiError) as api:
            validate_log_levels([ConfigChange(NAME, "INFO", op)])
        assert api.value.message == f"{name} operation is not allowed for the BROKER_LOGGER resource"


def test_a_placeholder_parent_is_no_logger() -> None:
    logging.getLogger("kafka.test.placeholder_parent.Child")
    with pytest.raises(InvalidConfigValue):
        validate_log_levels([ConfigChange("kafka.test.placeholder_parent", "INFO", SET)])
    validate_log_levels([ConfigChange("root", "INFO", SET)])
