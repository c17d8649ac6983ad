"""The broker's config-change listener run until a notification after a failing one is handled: the failure Kafka's
listener logs for it (``error processing change notification <data> from <path>``) and its exception."""

from __future__ import annotations

import logging

import pytest
from tests.helpers import wait_until

from zkcontroller.broker.topic_config_manager import TopicConfigManager

LISTENER = "kafka.common.ZkNodeChangeNotificationListener"


async def the_one_listener_failure(manager: TopicConfigManager, caplog: pytest.LogCaptureFixture, bad: str,
                                   entity: str, handled_next: str) -> BaseException:
    """Start ``manager``, stop it once the notification of ``handled_next`` (an entity path) is handled, and check
    the listener logged exactly one failure: the notification at ``bad``, naming ``entity``. Its exception."""
    with caplog.at_level(logging.INFO, LISTENER), caplog.at_level(logging.INFO, "kafka.server.DynamicConfigManager"):
        await manager.startup()
        await wait_until(lambda: f"{handled_next} with config" in caplog.text, timeout_s=5,
                         what="the next notification handled")
    manager.shutdown()
    failures = [r for r in caplog.records if r.name == LISTENER and r.levelname == "ERROR"]
    assert [r.getMessage() for r in failures] == [
        f'error processing change notification {{"version":2,"entity_path":"{entity}"}} from {bad}']
    exc_info = failures[0].exc_info
    assert exc_info is not None and exc_info[1] is not None
    return exc_info[1]
