"""The request quota, ``request_percentage`` (Kafka 2.8.2's ``ClientRequestQuotaManager``): the handling time as a
percentage of one thread (``nanos * 100 / 1e9``, so 1 ms is 0.1) on the sampled rate of the produce quota, the
throttle ``(rate - quota) / quota * window`` bounded by one quota window (1 s); and where a response's
``throttle_time_ms`` is, for the request quota to set it."""

from __future__ import annotations

from dataclasses import fields

import pytest
from kio.serial import entity_reader
from tests.helpers import ManualRuntime

from zkcontroller.broker.client_quota_manager import (
    ANONYMOUS,
    ClientRequestQuotaManager,
    RequestTime,
    apply_quota_config,
    current_request,
    mark_local_complete,
    start_request,
)
from zkcontroller.broker.kafka_apis import THROTTLE_FIRST_SINCE, throttle_field_offset
from zkcontroller.protocol.wire import alter_configs as alter_configs_wire
from zkcontroller.protocol.wire import client_apis
from zkcontroller.protocol.wire import client_quotas as client_quotas_wire
from zkcontroller.protocol.wire import describe_configs as describe_configs_wire
from zkcontroller.protocol.wire.client_apis import API_VERSIONS, schema_module


def millis_to_percent(millis: float) -> float:
    return millis * 1000 * 1000 * 100 / 1e9


def test_kafkas_request_percentage_example() -> None:
    """ClientRequestQuotaManagerTest.testRequestPercentageQuotaViolation: quota 1 % (10 ms per second). 4 ms each
    second for 10 s is within it; 67.1 ms half a second later makes (40 + 67.1) ms over 10.5 s = 10.2 ms/s, so
    (10.2 - 10) / 10 x 10.5 s = 210 ms. Once the spike has left the samples, nothing; a 500 ms spike would need
    more than a window: bounded to 1000 ms, for as long as it stays in the samples (11 s)."""
    runtime = ManualRuntime()
    manager = ClientRequestQuotaManager(runtime)  # type: ignore[arg-type]
    manager.update_quota(ANONYMOUS, "test-client", 1.0)

    def record(value: float) -> int:
        return manager.maybe_record_and_get_throttle_time_ms(ANONYMOUS, "test-client", value)

    for _ in range(10):
        assert record(millis_to_percent(4)) == 0
        runtime.advance(1000)
    runtime.advance(500)
    assert record(millis_to_percent(67.1)) == 210
    for _ in range(11):
        record(millis_to_percent(4))
        runtime.advance(1000)
    assert record(0) == 0
    assert record(millis_to_percent(500)) == 1000
    for _ in range(10):
        runtime.advance(1000)
        assert record(0) == 1000
    runtime.advance(1000)
    assert record(0) == 0


def test_handling_time_in_ms_and_no_quota() -> None:
    """105 ms is 10.5; with no quota ever set nothing is recorded (Kafka's ``quotasEnabled``)."""
    runtime = ManualRuntime()
    manager = ClientRequestQuotaManager(runtime)  # type: ignore[arg-type]
    assert manager.percentage(105) == pytest.approx(10.5)
    assert manager.maybe_record_request(ANONYMOUS, "c", 10_000) == 0
    manager.update_quota(None, "c", 1.0)
    # the first record counts over 10 windows: 10.5 / 10 s = 1.05 %, (1.05 - 1) / 1 x 10 000 ms = 500 ms
    assert manager.maybe_record_request(ANONYMOUS, "c", 105) == 500


def test_the_config_node_is_read_as_a_double() -> None:
    runtime = ManualRuntime()
    manager = ClientRequestQuotaManager(runtime)  # type: ignore[arg-type]
    apply_quota_config(manager, "clients", "c", {"request_percentage": "12.5", "producer_byte_rate": "1"})
    assert manager.quota(ANONYMOUS, "c") == 12.5
    with pytest.raises(ValueError, match='For input string: "lots"'):
        apply_quota_config(manager, "clients", "c", {"request_percentage": "lots"})


def test_the_handling_time_ends_at_the_local_completion() -> None:
    """``requestThreadTimeNanos``: a wait after `mark_local_complete` (Kafka's purgatory) is not handling time."""
    timing = start_request(1_000)
    assert current_request() is timing
    mark_local_complete(1_030)
    mark_local_complete(1_500)  # the first mark stands
    assert timing.handling_ms(2_000) == 30
    assert RequestTime(1_000).handling_ms(1_250) == 250


OWN_SPECS = {describe_configs_wire.DESCRIBE_CONFIGS: describe_configs_wire.RESPONSE,
             alter_configs_wire.ALTER_CONFIGS: alter_configs_wire.RESPONSES[alter_configs_wire.ALTER_CONFIGS],
             alter_configs_wire.INCREMENTAL_ALTER_CONFIGS:
                 alter_configs_wire.RESPONSES[alter_configs_wire.INCREMENTAL_ALTER_CONFIGS],
             client_quotas_wire.DESCRIBE_CLIENT_QUOTAS: client_quotas_wire.DESCRIBE_RESPONSE,
             client_quotas_wire.ALTER_CLIENT_QUOTAS: client_quotas_wire.ALTER_RESPONSE}
"""The responses written with our own schema tables rather than kio's."""


@pytest.mark.parametrize("api_key", sorted(THROTTLE_FIRST_SINCE))
def test_the_throttle_is_the_first_field_from_its_version(api_key: int) -> None:
    """Kafka 2.8's schemas (as kio or our own tables have them): the throttle first from the listed version, absent
    before."""
    since = THROTTLE_FIRST_SINCE[api_key]
    if api_key in OWN_SPECS:
        first = OWN_SPECS[api_key].fields[0]
        assert first.name == "throttle_time_ms" and first.versions == f"{since}+"
        return
    checked = []
    for version in range(0, 13):
        try:
            module = schema_module(api_key, version, "response")
        except ModuleNotFoundError:
            continue
        cls = getattr(module, next(n for n in dir(module) if n.lower() == module.__name__.split(".")[-3]
                                   .replace("_", "") + "response"))
        names = [f.name for f in fields(cls)]
        checked.append(version)
        if version >= since:
            assert names[0] == "throttle_time", (api_key, version)
            assert throttle_field_offset(api_key, version, b"") == 0
        else:
            assert "throttle_time" not in names
            assert throttle_field_offset(api_key, version, b"") is None
    assert checked and checked[-1] >= since  # kio lacks some old versions (CreateTopics v0-1, ListOffsets v0)


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_api_versions_throttle_after_its_api_list(version: int) -> None:
    """ApiVersions v1+ has ``throttle_time`` after the API list: written there, kio reads it back."""
    supported = {k: (0, 3) for k in range(70)}  # a compact count of 71: one varint byte
    body = client_apis.api_versions_response(version, supported)
    at = throttle_field_offset(API_VERSIONS, version, body)
    if version == 0:
        assert at is None
        return
    assert at is not None
    patched = body[:at] + (777).to_bytes(4, "big") + body[at + 4:]
    cls = schema_module(API_VERSIONS, version, "response").ApiVersionsResponse
    decoded, _ = entity_reader(cls)(memoryview(patched), 0)
    assert round(decoded.throttle_time.total_seconds() * 1000) == 777
    assert len(decoded.api_keys) == len(supported)


def test_api_versions_two_byte_compact_count() -> None:
    """200 APIs: the compact count 201 takes two varint bytes."""
    supported = {k: (0, 1) for k in range(200)}
    body = client_apis.api_versions_response(3, supported)
    at = throttle_field_offset(API_VERSIONS, 3, body)
    assert at == 2 + 2 + 7 * 200
    cls = schema_module(API_VERSIONS, 3, "response").ApiVersionsResponse
    patched = body[:at] + (5).to_bytes(4, "big") + body[at + 4:]
    decoded, _ = entity_reader(cls)(memoryview(patched), 0)
    assert round(decoded.throttle_time.total_seconds() * 1000) == 5
