"""DescribeClientQuotas (API 48) and AlterClientQuotas (API 49) v0–v1 on the wire: Kafka 2.8.2's message schemas
as our own table (v1 is v0, flexible), read and written with `codec`.

A quota entity is a list of (entity type, name) pairs: ``user``, ``client-id`` or ``ip``, a null name being the
default entity of the type. A filter component matches a name exactly (match type 0), the default entity (1) or
any named entity of its type (2).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from zkcontroller.protocol.wire import codec
from zkcontroller.protocol.wire.schema import Field, MessageSpec

DESCRIBE_CLIENT_QUOTAS = 48
ALTER_CLIENT_QUOTAS = 49
DESCRIBE_CLIENT_QUOTAS_VERSIONS = (0, 1)
ALTER_CLIENT_QUOTAS_VERSIONS = (0, 1)
"""Kafka 2.8.2 serves 0–1 of both."""

USER, CLIENT_ID, IP = "user", "client-id", "ip"
"""``ClientQuotaEntity``'s entity types."""
MATCH_EXACT, MATCH_DEFAULT, MATCH_SPECIFIED = 0, 1, 2

_ENTITY = (Field("entity_type", "string"), Field("entity_name", "string", nullable="0+"))

DESCRIBE_REQUEST = MessageSpec("DescribeClientQuotasRequest", "0-1", "1+", (
    Field("components", "[]", fields=(
        Field("entity_type", "string"),
        Field("match_type", "int8"),
        Field("match", "string", nullable="0+"),
    )),
    Field("strict", "bool"),
))
DESCRIBE_RESPONSE = MessageSpec("DescribeClientQuotasResponse", "0-1", "1+", (
    Field("throttle_time_ms", "int32"),
    Field("error_code", "int16"),
    Field("error_message", "string", nullable="0+"),
    Field("entries", "[]", nullable="0+", fields=(
        Field("entity", "[]", fields=_ENTITY),
        Field("values", "[]", fields=(Field("key", "string"), Field("value", "float64"))),
    )),
))
ALTER_REQUEST = MessageSpec("AlterClientQuotasRequest", "0-1", "1+", (
    Field("entries", "[]", fields=(
        Field("entity", "[]", fields=_ENTITY),
        Field("ops", "[]", fields=(Field("key", "string"), Field("value", "float64"), Field("remove", "bool"))),
    )),
    Field("validate_only", "bool"),
))
ALTER_RESPONSE = MessageSpec("AlterClientQuotasResponse", "0-1", "1+", (
    Field("throttle_time_ms", "int32"),
    Field("entries", "[]", fields=(
        Field("error_code", "int16"),
        Field("error_message", "string", nullable="0+"),
        Field("entity", "[]", fields=_ENTITY),
    )),
))

QuotaEntity = tuple[tuple[str, str | None], ...]
"""(entity type, name or None for the default) pairs, in the request's order."""


@dataclass(frozen=True, slots=True)
class FilterComponent:
    entity_type: str
    match_type: int
    match: str | None


@dataclass(frozen=True, slots=True)
class DescribeQuotasQuery:
    components: tuple[FilterComponent, ...]
    strict: bool


@dataclass(frozen=True, slots=True)
class DescribedQuotas:
    """A whole DescribeClientQuotas answer: the entries, or a request-level error (entries then null)."""

    entries: tuple[tuple[QuotaEntity, tuple[tuple[str, float], ...]], ...] | None
    error: int = 0
    message: str | None = None


@dataclass(frozen=True, slots=True)
class QuotaOp:
    """One op: ``value`` None removes the key (the request's ``remove``)."""

    key: str
    value: float | None


@dataclass(frozen=True, slots=True)
class QuotaAlteration:
    entity: QuotaEntity
    ops: tuple[QuotaOp, ...]


@dataclass(frozen=True, slots=True)
class AlterQuotasQuery:
    entries: tuple[QuotaAlteration, ...]
    validate_only: bool


@dataclass(frozen=True, slots=True)
class AlteredQuota:
    entity: QuotaEntity
    error: int = 0
    message: str | None = None


def _entity(value: Iterable[dict[str, object]]) -> QuotaEntity:
    return tuple((str(e["entity_type"]), e["entity_name"]) for e in value)  # type: ignore[misc]


def _entity_out(entity: QuotaEntity) -> list[dict[str, object]]:
    return [{"entity_type": t, "entity_name": n} for t, n in entity]


def decode_describe_request(version: int, buf: bytes | memoryview, offset: int) -> DescribeQuotasQuery:
    value = codec.decode(DESCRIBE_REQUEST, version, buf, offset, exact=False)
    return DescribeQuotasQuery(tuple(FilterComponent(c["entity_type"], c["match_type"], c["match"])
                                     for c in value["components"]), bool(value["strict"]))


def encode_describe_request(version: int, query: DescribeQuotasQuery) -> bytes:
    """For tests and tools."""
    return codec.encode(DESCRIBE_REQUEST, version, {"components": [
        {"entity_type": c.entity_type, "match_type": c.match_type, "match": c.match} for c in query.components],
        "strict": query.strict})


def encode_describe_response(version: int, described: DescribedQuotas, throttle_time_ms: int = 0) -> bytes:
    entries = None if described.entries is None else [
        {"entity": _entity_out(entity), "values": [{"key": k, "value": v} for k, v in values]}
        for entity, values in described.entries]
    return codec.encode(DESCRIBE_RESPONSE, version, {
        "throttle_time_ms": throttle_time_ms, "error_code": described.error, "error_message": described.message,
        "entries": entries})


def decode_describe_response(version: int, buf: bytes | memoryview, offset: int = 0) -> DescribedQuotas:
    """For tests and tools."""
    value = codec.decode(DESCRIBE_RESPONSE, version, buf, offset)
    entries = None if value["entries"] is None else tuple(
        (_entity(e["entity"]), tuple((v["key"], v["value"]) for v in e["values"])) for e in value["entries"])
    return DescribedQuotas(entries, value["error_code"], value["error_message"])


def decode_alter_request(version: int, buf: bytes | memoryview, offset: int) -> AlterQuotasQuery:
    value = codec.decode(ALTER_REQUEST, version, buf, offset, exact=False)
    return AlterQuotasQuery(tuple(
        QuotaAlteration(_entity(e["entity"]), tuple(QuotaOp(o["key"], None if o["remove"] else o["value"])
                                                    for o in e["ops"]))
        for e in value["entries"]), bool(value["validate_only"]))


def encode_alter_request(version: int, query: AlterQuotasQuery) -> bytes:
    """For tests and tools."""
    return codec.encode(ALTER_REQUEST, version, {"entries": [
        {"entity": _entity_out(e.entity), "ops": [
            {"key": o.key, "value": 0.0 if o.value is None else o.value, "remove": o.value is None} for o in e.ops]}
        for e in query.entries], "validate_only": query.validate_only})


def encode_alter_response(version: int, altered: Iterable[AlteredQuota], throttle_time_ms: int = 0) -> bytes:
    return codec.encode(ALTER_RESPONSE, version, {"throttle_time_ms": throttle_time_ms, "entries": [
        {"error_code": a.error, "error_message": a.message, "entity": _entity_out(a.entity)} for a in altered]})


def decode_alter_response(version: int, buf: bytes | memoryview, offset: int = 0) -> list[AlteredQuota]:
    """For tests and tools."""
    value = codec.decode(ALTER_RESPONSE, version, buf, offset)
    return [AlteredQuota(_entity(e["entity"]), e["error_code"], e["error_message"]) for e in value["entries"]]
