"""DescribeConfigs (API 32) v0–v4 on the wire: Kafka 2.8.2's ``DescribeConfigsRequest.json`` and
``DescribeConfigsResponse.json`` as our own schema table (kio's schemas start at v1), read and written with
`codec`.

v0 has no ``IncludeSynonyms`` and answers ``IsDefault`` in place of ``ConfigSource`` and the synonyms; Kafka
2.8.2's broker never sets ``IsDefault`` (the Java client derives the source from it), so it is false here too.
v1 adds the source and synonyms, v2 is v1 (throttling differs), v3 adds ``IncludeDocumentation``, ``ConfigType``
and ``Documentation``, v4 is v3 made flexible (compact strings and arrays, tagged fields).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from zkcontroller.protocol.wire import codec
from zkcontroller.protocol.wire.schema import Field, MessageSpec

DESCRIBE_CONFIGS = 32
DESCRIBE_CONFIGS_VERSIONS = (0, 4)
"""Kafka 2.8.2's 0–4 (v4 flexible, KAFKA-10729, in 2.8.0): kafka-python 3.0.12 asks v4 of a 2.8 broker."""

REQUEST = MessageSpec("DescribeConfigsRequest", "0-4", "4+", (
    Field("resources", "[]", fields=(
        Field("resource_type", "int8"),
        Field("resource_name", "string"),
        Field("configuration_keys", "[]string", nullable="0+"),
    )),
    Field("include_synonyms", "bool", versions="1+", default=False),
    Field("include_documentation", "bool", versions="3+", default=False),
))
RESPONSE = MessageSpec("DescribeConfigsResponse", "0-4", "4+", (
    Field("throttle_time_ms", "int32"),
    Field("results", "[]", fields=(
        Field("error_code", "int16"),
        Field("error_message", "string", nullable="0+"),
        Field("resource_type", "int8"),
        Field("resource_name", "string"),
        Field("configs", "[]", fields=(
            Field("name", "string"),
            Field("value", "string", nullable="0+"),
            Field("read_only", "bool"),
            Field("is_default", "bool", versions="0", default=False),
            Field("config_source", "int8", versions="1+", default=-1),
            Field("is_sensitive", "bool"),
            Field("synonyms", "[]", versions="1+", fields=(
                Field("name", "string"),
                Field("value", "string", nullable="0+"),
                Field("source", "int8"),
            )),
            Field("config_type", "int8", versions="3+", default=0),
            Field("documentation", "string", versions="3+", nullable="0+"),
        )),
    )),
))


@dataclass(frozen=True, slots=True)
class ConfigResourceQuery:
    """One resource of a request; ``keys`` None (or empty) for all of its configs."""

    resource_type: int
    resource_name: str
    keys: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class DescribeConfigsQuery:
    resources: list[ConfigResourceQuery]
    include_synonyms: bool = False
    include_documentation: bool = False


@dataclass(frozen=True, slots=True)
class Synonym:
    name: str
    value: str | None
    source: int


@dataclass(frozen=True, slots=True)
class ConfigEntry:
    """One ``DescribeConfigsResourceResult``."""

    name: str
    value: str | None
    source: int
    read_only: bool = False
    is_sensitive: bool = False
    config_type: int = 0
    synonyms: tuple[Synonym, ...] = ()
    documentation: str | None = None


@dataclass(frozen=True, slots=True)
class ConfigResourceResult:
    """One ``DescribeConfigsResult``."""

    resource_type: int
    resource_name: str
    error: int = 0
    message: str | None = None
    configs: tuple[ConfigEntry, ...] = field(default_factory=tuple)


def decode_request(version: int, buf: bytes | memoryview, offset: int) -> DescribeConfigsQuery:
    """The request body; `codec.WireFormatError` for malformed bytes (trailing bytes are ignored, as for every
    client request)."""
    value = codec.decode(REQUEST, version, buf, offset, exact=False)
    resources = [ConfigResourceQuery(r["resource_type"], r["resource_name"],
                                     None if r["configuration_keys"] is None else tuple(r["configuration_keys"]))
                 for r in value["resources"]]
    return DescribeConfigsQuery(resources, bool(value.get("include_synonyms", False)),
                                bool(value.get("include_documentation", False)))


def encode_request(version: int, query: DescribeConfigsQuery) -> bytes:
    """For tests and tools: a request body."""
    return codec.encode(REQUEST, version, {
        "resources": [{"resource_type": r.resource_type, "resource_name": r.resource_name,
                       "configuration_keys": None if r.keys is None else list(r.keys)} for r in query.resources],
        "include_synonyms": query.include_synonyms, "include_documentation": query.include_documentation})


def encode_response(version: int, results: Iterable[ConfigResourceResult]) -> bytes:
    """A response body, with the fields ``version`` has."""
    return codec.encode(RESPONSE, version, {"throttle_time_ms": 0, "results": [
        {"error_code": r.error, "error_message": r.message, "resource_type": r.resource_type,
         "resource_name": r.resource_name, "configs": [
             {"name": c.name, "value": c.value, "read_only": c.read_only, "is_default": False,
              "config_source": c.source, "is_sensitive": c.is_sensitive,
              "synonyms": [{"name": s.name, "value": s.value, "source": s.source} for s in c.synonyms],
              "config_type": c.config_type, "documentation": c.documentation} for c in r.configs]}
        for r in results]})


def decode_response(version: int, buf: bytes | memoryview, offset: int = 0) -> list[ConfigResourceResult]:
    """For tests and tools: a response body (v0's ``is_default`` is dropped, as the source stands for it)."""
    value = codec.decode(RESPONSE, version, buf, offset)
    return [ConfigResourceResult(
        r["resource_type"], r["resource_name"], r["error_code"], r["error_message"], tuple(
            ConfigEntry(c["name"], c["value"], c.get("config_source", -1), c["read_only"], c["is_sensitive"],
                        c.get("config_type", 0), tuple(Synonym(s["name"], s["value"], s["source"])
                                                       for s in c.get("synonyms", ())),
                        c.get("documentation"))
            for c in r["configs"]))
        for r in value["results"]]
