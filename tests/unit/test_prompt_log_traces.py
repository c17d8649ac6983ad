"""The in-process prompt shows a logged exception in one line naming the file that keeps its stack trace, for the
brokers' loggers as for the controller's; a 12-line traceback per broker (a bad /config/changes notification)
buried the prompt. The file named must really hold the trace."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from zkcontroller.cluster.cluster_shell import PromptLogHandler
from zkcontroller.cluster.logs import LogFiles
from zkcontroller.zk.java_text import JsonMappingException

pytestmark = pytest.mark.usefixtures("restored_logging")


def _log_error(logger: str, message: str) -> None:
    try:
        raise JsonMappingException("Expected `String` value, received 3")
    except JsonMappingException as e:
        logging.getLogger(logger).error(message, exc_info=e)


@pytest.mark.parametrize(("logger", "file"), [
    ("kafka.common.ZkNodeChangeNotificationListener", "server.log"),
    ("zkcontroller.broker.topic_config_manager", "server.log"),
    ("kafka.controller.KafkaController", "controller.log"),
    ("zkcontroller.controller.guards", "controller.log"),
])
def test_an_exception_is_one_line_naming_the_file_with_its_trace(tmp_path: Path, logger: str, file: str) -> None:
    shown: list[str] = []
    logs = LogFiles(tmp_path)
    try:
        with PromptLogHandler(shown.append).attached():
            _log_error(logger, "error processing change notification x from /config/changes/config_change_1")
    finally:
        logs.close()
    if logger.startswith("zkcontroller.controller"):
        assert shown == []  # LogFiles keeps it from the prompt (controller.log only)
    else:
        assert shown == [f"[{logger}] ERROR error processing change notification x from "
                         "/config/changes/config_change_1: JsonMappingException: Expected `String` value, received 3 "
                         f"(stack trace in {file})"]
    text = (tmp_path / file).read_text()
    assert "Traceback (most recent call last):" in text and "in _log_error" in text
    assert "Expected `String` value, received 3" in text


def test_a_logger_no_file_keeps_shows_its_trace_here(tmp_path: Path) -> None:
    shown: list[str] = []
    logs = LogFiles(tmp_path)
    try:
        with PromptLogHandler(shown.append).attached():
            _log_error("zkcontroller.zk.client_brokers", "cannot register")
    finally:
        logs.close()
    assert len(shown) == 1 and "Traceback (most recent call last):" in shown[0]
    assert "stack trace in" not in shown[0]
