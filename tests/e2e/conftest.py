"""Fixtures the end-to-end client tests share: a kafka-python admin client over the module's own ``address``
fixture (each module starts its own cluster)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture
def admin(address: str) -> Iterator[Any]:
    from kafka.admin import KafkaAdminClient

    client = KafkaAdminClient(bootstrap_servers=address, request_timeout_ms=30000)
    try:
        yield client
    finally:
        client.close()
