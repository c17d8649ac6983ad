"""FindCoordinator: no group or transaction coordinators here, answered as a Kafka 2.8 broker whose authorizer denies
the group or transactional id (GROUP_AUTHORIZATION_FAILED / TRANSACTIONAL_ID_AUTHORIZATION_FAILED, no node) with a
message saying why, and one WARN per client and group naming what to use instead. Before, the API was not
advertised: ``kcat -G`` never asked, waited for a rebalance for ever, and nothing said why."""

from __future__ import annotations

import asyncio
import io
import logging
from typing import Any

import pytest
from kio.schema.api_versions.v3.response import ApiVersionsResponse as ApiVersionsV3
from kio.serial import entity_reader, entity_writer
from tests.helpers import require_tool
from tests.wire.server_fixture import request_frame, seeded_apis

from zkcontroller.protocol.wire import client_apis
from zkcontroller.protocol.wire.frames import decode_response_header
from zkcontroller.runtime.socket_server import SocketServer


def _request(version: int, key: str, key_type: int = 0) -> bytes:
    m = client_apis.schema_module(client_apis.FIND_COORDINATOR, version, "request")
    values: dict[str, Any] = {"key": key} if version == 0 else {"key": key, "key_type": key_type}
    buf = io.BytesIO()
    entity_writer(m.FindCoordinatorRequest)(buf, m.FindCoordinatorRequest(**values))
    return buf.getvalue()


async def _ask(apis: Any, version: int, key: str = "grp", key_type: int = 0, client_id: str = "rdkafka") -> Any:
    frame = request_frame(client_apis.FIND_COORDINATOR, version, 4, _request(version, key, key_type), client_id)
    payload = await apis.handle(frame[4:])
    correlation_id, offset = decode_response_header(payload, client_apis.FIND_COORDINATOR, version)
    assert correlation_id == 4
    m = client_apis.schema_module(client_apis.FIND_COORDINATOR, version, "response")
    response, _ = entity_reader(m.FindCoordinatorResponse)(memoryview(payload)[offset:], 0)
    return response


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "zkcontroller.broker.KafkaApis"]


@pytest.mark.parametrize("version", [0, 1, 2, 3])
async def test_every_version_is_refused_with_no_node(version: int) -> None:
    response = await _ask(seeded_apis(), version)
    assert (response.error_code, response.node_id, response.host, response.port) == (30, -1, "", -1)
    if version >= 1:
        assert "kcat -C -t TOPIC -p PARTITION -o end" in response.error_message


async def test_api_versions_advertises_find_coordinator_0_to_3() -> None:
    """Kafka 2.8's range; librdkafka asks a broker for a coordinator only if it lists the API."""
    payload = await seeded_apis().handle(request_frame(18, 3, 7, b"\x05kcat\x061.7.1\x00")[4:])
    response, _ = entity_reader(ApiVersionsV3)(memoryview(payload)[4:], 0)
    assert {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}[10] == (0, 3)


async def test_one_warning_per_client_and_group_names_the_alternative(caplog: pytest.LogCaptureFixture) -> None:
    apis = seeded_apis()
    with caplog.at_level(logging.WARNING):
        for _ in range(3):  # a client that asks again
            await _ask(apis, 2, client_id="rdkafka")
        await _ask(apis, 3, key="payments", client_id="rdkafka")
        await _ask(apis, 3, key="payments", client_id="other")
    first, second, third = _warnings(caplog)
    assert first.startswith("[KafkaApi-1] FindCoordinator for consumer group 'grp' from client rdkafka: ")
    assert "answered GROUP_AUTHORIZATION_FAILED" in first
    assert "kcat -C -b HOST:PORT -t TOPIC -p PARTITION -o end" in first
    assert "consumer group 'payments' from client rdkafka" in second
    assert "consumer group 'payments' from client other" in third


async def test_a_transactional_id_is_named_as_such(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        assert (await _ask(seeded_apis(), 3, key="tx-1", key_type=1)).error_code == 53
    (warning,) = _warnings(caplog)
    assert "for transactional id 'tx-1'" in warning and "TRANSACTIONAL_ID_AUTHORIZATION_FAILED" in warning


async def test_an_unknown_key_type_is_an_invalid_request(caplog: pytest.LogCaptureFixture) -> None:
    """``CoordinatorType.forId`` throws InvalidRequestException: ``handleError`` logs it, the answer is
    INVALID_REQUEST with no node."""
    with caplog.at_level(logging.ERROR):
        response = await _ask(seeded_apis(), 3, key_type=7)
    assert (response.error_code, response.node_id) == (42, -1)
    assert any("Unknown coordinator type received: 7" in r.getMessage() and "api=FIND_COORDINATOR" in r.getMessage()
               for r in caplog.records)


async def test_kcat_balanced_consumer_stops_with_the_reason() -> None:
    """``kcat -G`` (bounded by ``timeout``) asks for a coordinator, prints librdkafka's consumer error with the
    broker's message and exits 1; it used to wait for a rebalance for ever, printing nothing."""
    kcat = require_tool("kcat", "not on PATH (the wire tests need it)")
    server = SocketServer("127.0.0.1", 0, seeded_apis().handle)
    await server.start()
    try:
        process = await asyncio.create_subprocess_exec(
            "timeout", "30", kcat, "-b", f"127.0.0.1:{server.port}", "-G", "grp", "orders",
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
        _, stderr = await process.communicate()
    finally:
        await server.stop()
    assert process.returncode == 1, (process.returncode, stderr)
    assert ("% ERROR: Consumer error: FindCoordinator response error: Consumer groups and transactions are not "
            "implemented by this broker") in stderr.decode()
