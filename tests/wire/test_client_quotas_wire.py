"""DescribeClientQuotas (48) and AlterClientQuotas (49) v0–v1 over a real socket, as Kafka 2.8.2's
``ZkAdminManager.describeClientQuotas``/``alterClientQuotas`` answer: the nodes the config command writes, the
match types, ``strict``, ``validate_only``, per-entity errors and request-level ones; the hand-written schemas
agree with kio's. (Neither kafka-python 3.0.12 nor confluent-kafka 2.16 has a client quota call.)"""

from __future__ import annotations

import asyncio
import importlib
import io
from typing import Any

import pytest
from kio.serial import entity_reader, entity_writer
from tests.integration.listening import Cluster

from zkcontroller.admin.admin_manager_log import AdminManagerLog
from zkcontroller.admin.client_quota_admin import describe_client_quotas
from zkcontroller.protocol.wire import client_quotas as cq
from zkcontroller.protocol.wire.client_quotas import (
    ALTER_CLIENT_QUOTAS,
    DESCRIBE_CLIENT_QUOTAS,
    AlteredQuota,
    AlterQuotasQuery,
    DescribedQuotas,
    DescribeQuotasQuery,
    FilterComponent,
    QuotaAlteration,
    QuotaOp,
)
from zkcontroller.zk import paths

from .admin_fixture import address, admin_cluster_fixture, raw_round_trip  # noqa: F401 (the fixture)

INVALID_REQUEST, UNKNOWN_SERVER_ERROR, UNSUPPORTED_VERSION = 42, -1, 35


async def alter(at: str, version: int, *entries: QuotaAlteration, validate_only: bool = False
                ) -> list[AlteredQuota]:
    body = cq.encode_alter_request(version, AlterQuotasQuery(entries, validate_only))
    payload, offset = await asyncio.to_thread(raw_round_trip, at, ALTER_CLIENT_QUOTAS, version, body)
    return cq.decode_alter_response(version, payload, offset)


async def describe(at: str, version: int, *components: FilterComponent, strict: bool = False) -> DescribedQuotas:
    body = cq.encode_describe_request(version, DescribeQuotasQuery(components, strict))
    payload, offset = await asyncio.to_thread(raw_round_trip, at, DESCRIBE_CLIENT_QUOTAS, version, body)
    return cq.decode_describe_response(version, payload, offset)


def ent(*pairs: tuple[str, str | None]) -> tuple[tuple[str, str | None], ...]:
    return pairs


@pytest.mark.parametrize("version", [0, 1])
async def test_alter_then_describe_as_kafka(admin_cluster: Cluster, version: int) -> None:
    cluster, zk = admin_cluster
    at = address(cluster, cluster.running_brokers()[0])
    alice_c = ent(("user", "User:alice"), ("client-id", "c 1"))
    altered = await alter(
        at, version,
        QuotaAlteration(ent(("user", "User:alice")), (QuotaOp("producer_byte_rate", 1024.0),
                                                     QuotaOp("request_percentage", 12.5))),
        QuotaAlteration(alice_c, (QuotaOp("consumer_byte_rate", 2048.0),)),
        QuotaAlteration(ent(("client-id", None)), (QuotaOp("producer_byte_rate", 100.0),)),
        QuotaAlteration(ent(("client-id", "x")), (QuotaOp("producer_byte_rate", 1.5),)),
        QuotaAlteration(ent(("client-id", "y")), (QuotaOp("nope", 1.0),)),
        QuotaAlteration(ent(("user", "")), (QuotaOp("producer_byte_rate", 1.0),)),
        QuotaAlteration(ent(("ip", "1.2.3.4"), ("user", "u")), (QuotaOp("producer_byte_rate", 1.0),)),
        QuotaAlteration((), (QuotaOp("producer_byte_rate", 1.0),)),
    )
    assert [(a.entity, a.error, a.message) for a in altered] == [
        (ent(("user", "User:alice")), 0, None),
        (alice_c, 0, None),
        (ent(("client-id", None)), 0, None),
        (ent(("client-id", "x")), INVALID_REQUEST, "Configuration producer_byte_rate must be a LONG value"),
        (ent(("client-id", "y")), INVALID_REQUEST, "Invalid configuration key nope"),
        (ent(("user", "")), INVALID_REQUEST, "Empty user not supported"),
        (ent(("ip", "1.2.3.4"), ("user", "u")), INVALID_REQUEST,
         "Invalid quota entity combination, IP entity should not be used with user/client ID entity."),
        ((), INVALID_REQUEST, "Invalid empty client quota entity"),
    ]
    assert await zk.get_entity_configs("users", "User%3Aalice") == {"producer_byte_rate": "1024",
                                                                    "request_percentage": "12.5"}
    assert await zk.get_entity_configs("users", "User%3Aalice/clients/c%201") == {"consumer_byte_rate": "2048"}
    assert await zk.get_entity_configs("clients", paths.DEFAULT_ENTITY) == {"producer_byte_rate": "100"}
    assert not await zk.path_exists("/config/clients/x")

    everything = await describe(at, version)
    assert everything.error == 0 and everything.entries is not None
    assert {(e, frozenset(v)) for e, v in everything.entries} == {
        (ent(("user", "User:alice")), frozenset({("producer_byte_rate", 1024.0), ("request_percentage", 12.5)})),
        (alice_c, frozenset({("consumer_byte_rate", 2048.0)})),
        (ent(("client-id", None)), frozenset({("producer_byte_rate", 100.0)})),
    } and len(everything.entries) == 3
    exact = await describe(at, version, FilterComponent("user", 0, "User:alice"), strict=True)
    assert [(e, dict(v)) for e, v in exact.entries or ()] == [
        (ent(("user", "User:alice")), {"producer_byte_rate": 1024.0, "request_percentage": 12.5})]
    pair = await describe(at, version, FilterComponent("user", 0, "User:alice"), FilterComponent("client-id", 2, None))
    assert pair.entries == ((alice_c, (("consumer_byte_rate", 2048.0),)),)
    default_client = await describe(at, version, FilterComponent("client-id", 1, None), strict=True)
    assert default_client.entries == ((ent(("client-id", None)), (("producer_byte_rate", 100.0),)),)

    for components, error, message in [
        ((FilterComponent("user", 0, "a"), FilterComponent("user", 1, None)), INVALID_REQUEST,
         "Duplicate user filter component entity type"),
        ((FilterComponent("group", 0, "a"),), UNSUPPORTED_VERSION, "Custom entity type 'group' not supported"),
        ((FilterComponent("user", 7, None),), UNKNOWN_SERVER_ERROR, None),
        ((FilterComponent("ip", 2, None), FilterComponent("user", 2, None)), INVALID_REQUEST,
         "Invalid entity filter component combination, IP filter component should not be used with user or "
         "clientId filter component."),
    ]:
        assert await describe(at, version, *components) == DescribedQuotas(None, error, message)

    removed = await alter(at, version, QuotaAlteration(ent(("user", "User:alice")), (
        QuotaOp("request_percentage", None),)), validate_only=True)
    assert removed == [AlteredQuota(ent(("user", "User:alice")))]
    assert "request_percentage" in await zk.get_entity_configs("users", "User%3Aalice")  # validate_only
    await alter(at, version, QuotaAlteration(ent(("user", "User:alice")), (QuotaOp("request_percentage", None),)))
    assert await zk.get_entity_configs("users", "User%3Aalice") == {"producer_byte_rate": "1024"}


async def test_a_node_the_config_command_wrote_is_described(admin_cluster: Cluster) -> None:
    _, zk = admin_cluster
    await zk.set_or_create_entity_configs("users", "<default>", {"producer_byte_rate": "7", "SCRAM-SHA-256": "x"})
    described = await describe_client_quotas(zk, DescribeQuotasQuery((FilterComponent("user", 1, None),), True),
                                       AdminManagerLog(1))
    assert described.entries == ((ent(("user", None)), (("producer_byte_rate", 7.0),)),)
    await zk.set_or_create_entity_configs("clients", "c", {"producer_byte_rate": "fast"})
    unreadable = await describe_client_quotas(zk, DescribeQuotasQuery((), False), AdminManagerLog(1))
    assert unreadable == DescribedQuotas(None, UNKNOWN_SERVER_ERROR, None)


def _kio(api: str, version: int, kind: str) -> Any:
    return importlib.import_module(f"kio.schema.{api}.v{version}.{kind}")


@pytest.mark.parametrize("version", [0, 1])
def test_the_schemas_agree_with_kios(version: int) -> None:
    rm = _kio("describe_client_quotas", version, "request")
    request = rm.DescribeClientQuotasRequest(components=(rm.ComponentData(entity_type="user", match_type=0,
                                                                           match="a"),), strict=True)
    buf = io.BytesIO()
    entity_writer(rm.DescribeClientQuotasRequest)(buf, request)
    assert cq.decode_describe_request(version, buf.getvalue(), 0) == DescribeQuotasQuery(
        (FilterComponent("user", 0, "a"),), True)
    body = cq.encode_describe_response(version, DescribedQuotas(((ent(("user", None)), (("k", 1.5),)),)))
    sm = _kio("describe_client_quotas", version, "response")
    decoded, size = entity_reader(sm.DescribeClientQuotasResponse)(memoryview(body), 0)
    assert size == len(body) and decoded.entries[0].values[0].value == 1.5

    am = _kio("alter_client_quotas", version, "request")
    alter_request = am.AlterClientQuotasRequest(entries=(am.EntryData(
        entity=(am.EntityData(entity_type="client-id", entity_name=None),),
        ops=(am.OpData(key="producer_byte_rate", value=5.0, remove=False),
             am.OpData(key="consumer_byte_rate", value=0.0, remove=True))),), validate_only=False)
    buf = io.BytesIO()
    entity_writer(am.AlterClientQuotasRequest)(buf, alter_request)
    assert cq.decode_alter_request(version, buf.getvalue(), 0) == AlterQuotasQuery((QuotaAlteration(
        ent(("client-id", None)), (QuotaOp("producer_byte_rate", 5.0), QuotaOp("consumer_byte_rate", None))),), False)
    body = cq.encode_alter_response(version, [AlteredQuota(ent(("user", "u")), INVALID_REQUEST, "no")])
    decoded, size = entity_reader(_kio("alter_client_quotas", version, "response").AlterClientQuotasResponse)(
        memoryview(body), 0)
    assert size == len(body) and decoded.entries[0].error_message == "no"
