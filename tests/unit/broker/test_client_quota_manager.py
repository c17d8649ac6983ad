"""The produce quota (Kafka 2.8.2's ``ClientQuotaManager``, ``Rate`` and ``QuotaConfigHandler``): Kafka's own
throttle example, the precedence of the eight quota levels, the config nodes read into quotas, and a broker's
config manager following ``/config/changes`` for them on the embedded store."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from tests.helpers import ManualRuntime, wait_until

from zkcontroller.admin.client_quotas import change_quota_config
from zkcontroller.broker.client_quota_manager import (
    ANONYMOUS,
    DEFAULT,
    LONG_MAX,
    ClientQuotaManager,
    apply_quota_config,
    java_round,
    to_int32,
)
from zkcontroller.broker.topic_config_manager import TopicConfigManager
from zkcontroller.runtime.runtime import AsyncioRuntime
from zkcontroller.zk.kafka_zk_client import KafkaZkClient


def test_kafkas_quota_violation_example() -> None:
    """ClientQuotaManagerTest.testQuotaViolation: 500 B/s; 400 B each second for 10 s is within it; 2300 B half
    a second later makes 6300 B over 10.5 s = 600 B/s, so (600 - 500) / 500 * 10.5 s = 2100 ms."""
    runtime = ManualRuntime()
    manager = ClientQuotaManager(runtime, quota_default=500)  # type: ignore[arg-type]

    def record(value: float) -> int:
        return manager.maybe_record_and_get_throttle_time_ms(ANONYMOUS, "unknown", value)

    for _ in range(10):
        assert record(400) == 0
        runtime.advance(1000)
    runtime.advance(500)
    assert record(2300) == 2100
    runtime.advance(2100)
    for _ in range(10):  # delays may go on until the burst's sample has rolled out
        record(400)
        runtime.advance(1000)
    assert record(0) == 0


def test_no_quota_no_throttle_and_no_sensor() -> None:
    manager = ClientQuotaManager(ManualRuntime())  # type: ignore[arg-type]
    assert not manager.quotas_enabled
    assert manager.maybe_record_and_get_throttle_time_ms(ANONYMOUS, "c", 10**12) == 0
    manager.update_quota(None, "other", 1.0)
    assert manager.maybe_record_and_get_throttle_time_ms(ANONYMOUS, "c", 10**12) == 0  # not its quota


def test_the_most_specific_quota_applies() -> None:
    """DefaultQuotaCallback's order: <user, client>, <user, default client>, <user>, <default user, client>,
    <default user, default client>, <default user>, <client>, <default client>."""
    manager = ClientQuotaManager(ManualRuntime())  # type: ignore[arg-type]
    levels = [((None, DEFAULT), 8.0), ((None, "c"), 7.0), ((DEFAULT, None), 6.0), ((DEFAULT, DEFAULT), 5.0),
              ((DEFAULT, "c"), 4.0), (("u", None), 3.0), (("u", DEFAULT), 2.0), (("u", "c"), 1.0)]
    for (user, client), quota in levels:
        manager.update_quota(user, client, quota)
        assert manager.quota("u", "c") == quota, (user, client)
    for (user, client), quota in reversed(levels[1:]):
        manager.update_quota(user, client, None)
        assert manager.quota("u", "c") == quota + 1, (user, client)  # the next level down
    manager.update_quota(None, DEFAULT, None)
    assert manager.quota("u", "c") == float(LONG_MAX)


def test_a_quota_node_sets_the_quota_of_its_entity() -> None:
    manager = ClientQuotaManager(ManualRuntime())  # type: ignore[arg-type]
    apply_quota_config(manager, "clients", "my%20client", {"producer_byte_rate": "100", "consumer_byte_rate": "1"})
    assert manager.quota(ANONYMOUS, "my client") == 100.0
    apply_quota_config(manager, "users", "ANONYMOUS/clients/my%20client", {"producer_byte_rate": "50"})
    assert manager.quota(ANONYMOUS, "my client") == 50.0 and manager.quota(ANONYMOUS, "other") == float(LONG_MAX)
    apply_quota_config(manager, "users", "<default>", {"producer_byte_rate": "70"})
    assert manager.quota(ANONYMOUS, "other") == 70.0
    apply_quota_config(manager, "users", "ANONYMOUS/clients/my%20client", {})  # removed: the user default is next
    assert manager.quota(ANONYMOUS, "my client") == 70.0
    for entity_type, name, configs in [("clients", "c", {"producer_byte_rate": "1.5"}),
                                       ("users", "a/b", {"producer_byte_rate": "1"})]:
        with pytest.raises(ValueError):
            apply_quota_config(manager, entity_type, name, configs)


@pytest.mark.parametrize(("value", "rounded", "as_int"), [
    (2.5, 3, 3), (-2.5, -2, -2), (float("nan"), 0, 0), (float("inf"), LONG_MAX, -1), (2**40 + 0.4, 2**40, 0)])
def test_throttle_time_is_rounded_and_narrowed_as_in_java(value: float, rounded: int, as_int: int) -> None:
    assert java_round(value) == rounded and to_int32(rounded) == as_int


def test_a_zero_quota_throttles_nobody_as_in_kafka() -> None:
    """(rate - 0) / 0 is infinite: Math.round gives Long.MaxValue, whose toInt is -1, so no throttle."""
    manager = ClientQuotaManager(ManualRuntime())  # type: ignore[arg-type]
    manager.update_quota(None, "c", 0.0)
    assert manager.maybe_record_and_get_throttle_time_ms(ANONYMOUS, "c", 100) == -1


@pytest.fixture
async def configs(zk: KafkaZkClient) -> AsyncIterator[TopicConfigManager]:
    await change_quota_config(zk, "clients", "<default>", {"producer_byte_rate": "1000"})  # before start-up
    manager = TopicConfigManager(1, lambda: zk, AsyncioRuntime())
    await manager.startup()
    yield manager
    manager.shutdown()


async def test_the_broker_reads_quotas_at_startup_and_follows_changes(zk: KafkaZkClient,
                                                                      configs: TopicConfigManager) -> None:
    quotas = configs.produce_quotas
    assert quotas.quota(ANONYMOUS, "any") == 1000.0
    await change_quota_config(zk, "users", "ANONYMOUS/clients/fast", {"producer_byte_rate": "5000000"})
    await wait_until(lambda: quotas.quota(ANONYMOUS, "fast") == 5_000_000.0, timeout_s=5, what="user-client quota")
    await change_quota_config(zk, "clients", "<default>", {})
    await wait_until(lambda: quotas.quota(ANONYMOUS, "any") == float(LONG_MAX), timeout_s=5, what="default removed")
    await zk.set_or_create_entity_configs("clients", "bad", {"producer_byte_rate": "fast"})  # not through the tool
    await zk.create_config_change_notification("clients/bad")
    await change_quota_config(zk, "clients", "later", {"producer_byte_rate": "9"})
    await wait_until(lambda: quotas.quota(ANONYMOUS, "later") == 9.0, timeout_s=5, what="a later change applied")
    assert quotas.quota(ANONYMOUS, "bad") == float(LONG_MAX)
