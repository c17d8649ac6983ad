"""AlterConfigs (API 33) v0–v2 and IncrementalAlterConfigs (API 44) v0–v1 on the wire: Kafka 2.8.2's
``AlterConfigsRequest.json``/``IncrementalAlterConfigsRequest.json`` and their responses as our own schema tables
(the shape `describe_configs` uses), read and written with `codec`.

Both requests carry resources (type, name) each with configs, and ``ValidateOnly``; the incremental one adds an
operation per config (`SET`, `DELETE`, `APPEND`, `SUBTRACT`) and is flexible from v1, AlterConfigs from v2. Both
answer one (error, message, type, name) per resource. An AlterConfigs entry decodes as a `SET`, so one handler serves
both.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from zkcontroller.protocol.wire import codec
from zkcontroller.protocol.wire.schema import Field, MessageSpec

ALTER_CONFIGS = 33
ALTER_CONFIGS_VERSIONS = (0, 2)
"""Kafka 2.8.2's 0–2 (v2 flexible, KAFKA-10729, in 2.8.0)."""
INCREMENTAL_ALTER_CONFIGS = 44
INCREMENTAL_ALTER_CONFIGS_VERSIONS = (0, 1)

SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
"""``AlterConfigOp.OpType`` ids."""
OP_NAMES = {SET: "SET", DELETE: "DELETE", APPEND: "APPEND", SUBTRACT: "SUBTRACT"}


def _request(name: str, incremental: bool) -> MessageSpec:
    return MessageSpec(name, "0-1" if incremental else "0-2", "1+" if incremental else "2+", (
        Field("resources", "[]", fields=(
            Field("resource_type", "int8"),
            Field("resource_name", "string"),
            Field("configs", "[]", fields=(
                Field("name", "string"),
                *((Field("config_operation", "int8"),) if incremental else ()),
                Field("value", "string", nullable="0+"),
            )),
        )),
        Field("validate_only", "bool"),
    ))


def _response(name: str, incremental: bool) -> MessageSpec:
    return MessageSpec(name, "0-1" if incremental else "0-2", "1+" if incremental else "2+", (
        Field("throttle_time_ms", "int32"),
        Field("responses", "[]", fields=(
            Field("error_code", "int16"),
            Field("error_message", "string", nullable="0+"),
            Field("resource_type", "int8"),
            Field("resource_name", "string"),
        )),
    ))


REQUESTS = {ALTER_CONFIGS: _request("AlterConfigsRequest", False),
            INCREMENTAL_ALTER_CONFIGS: _request("IncrementalAlterConfigsRequest", True)}
RESPONSES = {ALTER_CONFIGS: _response("AlterConfigsResponse", False),
             INCREMENTAL_ALTER_CONFIGS: _response("IncrementalAlterConfigsResponse", True)}


@dataclass(frozen=True, slots=True)
class ConfigChange:
    """One config of a resource: ``op`` is `SET` for AlterConfigs; ``value`` may be null on the wire."""

    name: str
    value: str | None
    op: int = SET


@dataclass(frozen=True, slots=True)
class AlterResource:
    resource_type: int
    resource_name: str
    configs: tuple[ConfigChange, ...] = ()


@dataclass(frozen=True, slots=True)
class AlterConfigsQuery:
    """Either request; ``incremental`` says which (their rules differ: AlterConfigs replaces a resource's whole
    config, IncrementalAlterConfigs changes the keys named)."""

    resources: list[AlterResource]
    validate_only: bool = False
    incremental: bool = False


@dataclass(frozen=True, slots=True)
class AlterResult:
    resource_type: int
    resource_name: str
    error: int = 0
    message: str | None = None


def decode_request(api_key: int, version: int, buf: bytes | memoryview, offset: int) -> AlterConfigsQuery:
    """The request body of ``api_key`` (33 or 44); `codec.WireFormatError` for malformed bytes (trailing bytes
    are ignored, as for every client request)."""
    value = codec.decode(REQUESTS[api_key], version, buf, offset, exact=False)
    return AlterConfigsQuery(
        [AlterResource(r["resource_type"], r["resource_name"],
                       tuple(ConfigChange(c["name"], c["value"], c.get("config_operation", SET)) for c in r["configs"]))
         for r in value["resources"]],
        bool(value["validate_only"]), api_key == INCREMENTAL_ALTER_CONFIGS)


def encode_request(api_key: int, version: int, query: AlterConfigsQuery) -> bytes:
    """For tests and tools: a request body."""
    return codec.encode(REQUESTS[api_key], version, {
        "resources": [{"resource_type": r.resource_type, "resource_name": r.resource_name,
                       "configs": [{"name": c.name, "value": c.value, "config_operation": c.op} for c in r.configs]}
                      for r in query.resources],
        "validate_only": query.validate_only})


def encode_response(api_key: int, version: int, results: Iterable[AlterResult]) -> bytes:
    return codec.encode(RESPONSES[api_key], version, {"throttle_time_ms": 0, "responses": [
        {"error_code": r.error, "error_message": r.message, "resource_type": r.resource_type,
         "resource_name": r.resource_name} for r in results]})


def decode_response(api_key: int, version: int, buf: bytes | memoryview, offset: int = 0) -> list[AlterResult]:
    """For tests and tools: a response body."""
    value = codec.decode(RESPONSES[api_key], version, buf, offset)
    return [AlterResult(r["resource_type"], r["resource_name"], r["error_code"], r["error_message"])
            for r in value["responses"]]
