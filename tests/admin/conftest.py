"""Admin tests here reuse the contract fixtures: a `KafkaZkClient` with brokers 1–3 on each ``backend``."""

from __future__ import annotations

from tests.contract.admin.conftest import admin, zk  # noqa: F401  (fixtures reused here)
from tests.contract.zk.conftest import clock, make_client  # noqa: F401
