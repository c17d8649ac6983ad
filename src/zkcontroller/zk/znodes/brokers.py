"""``/brokers/ids/<id>`` (ephemeral broker registration, JSON versions 1 and up) and ``/brokers/seqid``."""

from __future__ import annotations

import re
from typing import Any

from zkcontroller.model import (
    SECURITY_PROTOCOLS,
    Broker,
    BrokerInfo,
    EndPoint,
    SupportedVersionRange,
    sorted_features,
)
from zkcontroller.zk import paths
from zkcontroller.zk.errors import ZnodeDecodeError
from zkcontroller.zk.json_fields import INT32_MAX, JsonObject, check_str, dumps, parse_object
from zkcontroller.zk.scala_maps import scala_immutable_map, scala_mutable_map

# Kafka's EndPoint.uriParseExp, matched against the whole string.
_ENDPOINT_RE = re.compile(r"(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)")
_DEFAULT_PROTOCOL_MAP = {p: p for p in SECURITY_PROTOCOLS}


class BrokerIdsZNode:
    @staticmethod
    def path() -> str:
        return paths.BROKER_IDS


class BrokerSequenceIdZNode:
    """Empty data; brokers take the ``stat.version`` of an unconditional set as a generated id."""

    @staticmethod
    def path() -> str:
        return paths.BROKER_SEQUENCE_ID

    @staticmethod
    def encode() -> bytes:
        return b""


class BrokerIdZNode:
    """A broker's registration. Kafka 2.8 writes version 5 (4 or 2 for an older IBP); it reads version 1 (host
    and port) and any later one as version 2 and up (endpoints), refusing a missing version or one below 1."""

    CURRENT_VERSION = 5
    WRITABLE_VERSIONS = (2, 4, 5)
    READABLE_VERSIONS = range(1, INT32_MAX + 1)

    @staticmethod
    def path(broker_id: int) -> str:
        return paths.broker_id_path(broker_id)

    @staticmethod
    def encode(info: BrokerInfo, timestamp_ms: int) -> bytes:
        """The registration JSON; top-level host/port are the first PLAINTEXT endpoint's, for old clients."""
        version, broker = info.version, info.broker
        if version not in BrokerIdZNode.WRITABLE_VERSIONS:
            raise ValueError(f"Kafka never writes broker registration version {version}")
        plaintext = next((e for e in broker.endpoints if e.security_protocol == "PLAINTEXT"), None)
        fields: list[tuple[str, Any]] = [
            ("version", version),
            ("host", plaintext.host if plaintext else None),
            ("port", plaintext.port if plaintext else -1),
            ("endpoints", [e.connection_string for e in broker.endpoints]),
            ("jmx_port", info.jmx_port),
            ("timestamp", str(timestamp_ms)),
        ]
        if broker.rack is not None and version >= 3:
            fields.append(("rack", broker.rack))
        if version >= 4:
            fields.append(("listener_security_protocol_map", scala_immutable_map(
                (e.listener_name, e.security_protocol) for e in broker.endpoints)))
        if version >= 5:  # Features.toMap: Java maps, whose order is not reproduced (Kafka 2.8 brokers have none)
            fields.append(("features", {
                name: {"min_version": r.min_version, "max_version": r.max_version}
                for name, r in broker.features
            }))
        return dumps(scala_mutable_map(fields))  # ZkData's jsonMap is a mutable.Map: its hash order

    @staticmethod
    def decode(data: bytes | None, path: str) -> BrokerInfo:
        """Decode a registration at ``/brokers/ids/<id>`` (the id comes from the path).

        No data at all is Kafka's ``asJsonObject`` failure on ``readTree``'s ``MissingNode``, not a parse error."""
        broker_id = paths.parse_broker_id(path.rsplit("/", 1)[-1], path.rsplit("/", 1)[0])
        obj = parse_object(data, path)
        version = obj.version(BrokerIdZNode.READABLE_VERSIONS)
        assert version is not None
        jmx_port = obj.get_int("jmx_port")
        if version == 1:
            endpoints: tuple[EndPoint, ...] = (
                EndPoint(obj.get_str("host"), obj.get_int("port"), "PLAINTEXT", "PLAINTEXT"),
            )
        else:
            protocol_map = _decode_protocol_map(obj)
            endpoints = tuple(
                _decode_endpoint(check_str(raw, path, f"endpoints[{i}]"), protocol_map, path)
                for i, raw in enumerate(obj.get_list("endpoints"))
            )
        broker = Broker(broker_id, endpoints, obj.get_opt_str("rack"), _decode_features(obj))
        return BrokerInfo(broker, version, jmx_port)


def _decode_protocol_map(obj: JsonObject) -> dict[str, str]:
    raw = obj.get_opt_obj("listener_security_protocol_map")
    if raw is None:
        return _DEFAULT_PROTOCOL_MAP
    out: dict[str, str] = {}
    for listener, protocol in raw.items():
        where = f"listener_security_protocol_map.{listener}"
        name = check_str(protocol, obj.path, where).upper()
        if name not in SECURITY_PROTOCOLS:
            raise ZnodeDecodeError(obj.path, f"{where}: unknown security protocol {protocol!r}")
        out[listener.upper()] = name
    return out


def _decode_endpoint(text: str, protocol_map: dict[str, str], path: str) -> EndPoint:
    """Parse ``LISTENER://host:port`` as Kafka's ``EndPoint.createEndPoint`` does."""
    match = _ENDPOINT_RE.fullmatch(text)
    if match is None:
        raise ZnodeDecodeError(path, f"unable to parse {text!r} to a broker endpoint")
    listener = match.group(1).upper()
    protocol = protocol_map.get(listener)
    if protocol is None:
        raise ZnodeDecodeError(path, f"no security protocol defined for listener {listener}")
    port = int(match.group(3))
    if not -(2**31) <= port < 2**31:
        raise ZnodeDecodeError(path, f"endpoint {text!r}: port out of range")
    return EndPoint(match.group(2) or None, port, listener, protocol)


def _decode_features(obj: JsonObject) -> tuple[tuple[str, SupportedVersionRange], ...]:
    if obj.is_null_or_absent("features"):
        return ()
    features = obj.get_obj("features")
    out: list[tuple[str, SupportedVersionRange]] = []
    for name, raw in features.items():
        rng = features.as_object(raw, f"features.{name}")
        try:
            out.append((name, SupportedVersionRange(rng.get_int("min_version"), rng.get_int("max_version"))))
        except ValueError as e:
            raise ZnodeDecodeError(obj.path, f"features.{name}: {e}") from None
    return sorted_features(out)
