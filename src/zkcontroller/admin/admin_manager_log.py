"""The logger of Kafka's ``ZkAdminManager`` (``kafka.server.ZkAdminManager``), with its ``logIdent``: every line it
writes begins ``[Admin Manager on Broker <id>]: ``, so the admin handlers of one broker are told apart in a log
that several brokers share."""

from __future__ import annotations

import logging
from collections.abc import MutableMapping
from typing import Any

ADMIN_MANAGER_LOGGER = logging.getLogger("kafka.server.ZkAdminManager")


class AdminManagerLog(logging.LoggerAdapter):
    """``ADMIN_MANAGER_LOGGER`` with broker ``broker_id``'s prefix on every message."""

    def __init__(self, broker_id: int) -> None:
        super().__init__(ADMIN_MANAGER_LOGGER, {})
        self.prefix = f"[Admin Manager on Broker {broker_id}]: "

    def process(self, msg: Any, kwargs: MutableMapping[str, Any]) -> tuple[Any, MutableMapping[str, Any]]:
        return self.prefix + str(msg), kwargs
