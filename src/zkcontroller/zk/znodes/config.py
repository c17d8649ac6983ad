"""Entity configs (``/config/<type>/<name>``), config change notifications, ``/cluster/id``, ``/feature``."""

from __future__ import annotations

from collections.abc import Mapping

from zkcontroller.model import FeatureZNodeData, FeatureZNodeStatus, FinalizedVersionRange, sorted_features
from zkcontroller.zk import paths
from zkcontroller.zk.errors import UnparseableZnodeError, ZnodeDecodeError
from zkcontroller.zk.java_properties import properties_order
from zkcontroller.zk.json_fields import (
    INT32_MAX,
    JsonTooDeepError,
    check_str,
    dumps,
    json_kind,
    parse_json,
    parse_object,
)
from zkcontroller.zk.scala_maps import scala_mutable_map
from zkcontroller.zk.znodes.sequential import SequentialNotificationZNode

UNCLEAN_LEADER_ELECTION_ENABLE = "unclean.leader.election.enable"


class ConfigEntityTypeZNode:
    @staticmethod
    def path(entity_type: str) -> str:
        return paths.config_entity_type_path(entity_type)


class ConfigEntityZNode:
    """``{"version":1,"config":{"retention.ms":"1000"}}``; every value is a string."""

    VERSION = 1

    @staticmethod
    def path(entity_type: str, entity_name: str) -> str:
        return paths.config_entity_path(entity_type, entity_name)

    @staticmethod
    def encode(config: Mapping[str, str]) -> bytes:
        """ZkData's ``Map("version" -> 1, "config" -> config)``: ``config`` is a ``java.util.Properties``, which
        Jackson writes in its iteration order (`properties_order`, Java 11+, of the keys put in ``config``'s
        order: Kafka's tools put the node's keys as read, then the added ones). We wrote the keys sorted."""
        ordered = {key: config[key] for key in properties_order(config)}
        return dumps({"version": ConfigEntityZNode.VERSION, "config": ordered})

    @staticmethod
    def decode(data: bytes | None, path: str) -> dict[str, str]:
        """The overrides; null data (Kafka's ``bytes != null``), empty data or no ``config`` field means none.
        Strict: what `decode_lenient` reads as no overrides is an error here (the admin tools report it)."""
        config, ignored = ConfigEntityZNode.decode_lenient(data, path)
        if ignored is not None:
            raise ignored
        return config

    @staticmethod
    def decode_lenient(data: bytes | None, path: str) -> tuple[dict[str, str], ZnodeDecodeError | None]:
        """Kafka's reading (ZkData's ``ConfigEntityZNode.decode``): data that is not JSON, not a JSON object, or
        whose ``config`` is not an object (null included: ``asJsonObjectOption``) means no overrides; that
        reading is returned with the reason, so that the caller can report the znode. A value that is not a
        string still raises, as it throws in Kafka, and so does JSON nested deeper than Python's parser goes
        (`JsonTooDeepError`: Kafka reads its overrides, so reading none would drop them)."""
        if not data:
            return {}, None
        try:
            value = parse_json(data, path)  # Kafka reads no version
        except JsonTooDeepError:
            raise  # JSON to Kafka, which reads its overrides: malformed here, not no overrides
        except UnparseableZnodeError as e:
            return {}, e
        return ConfigEntityZNode.decode_lenient_value(value, path)

    @staticmethod
    def decode_lenient_value(value: object, path: str) -> tuple[dict[str, str], ZnodeDecodeError | None]:
        """`decode_lenient` of the JSON value already parsed (for a caller that looks at it again)."""
        if not isinstance(value, dict):
            return {}, ZnodeDecodeError(path, f"expected a JSON object, got {json_kind(value)}")
        if "config" not in value:
            return {}, None
        config = value["config"]
        if not isinstance(config, dict):
            return {}, ZnodeDecodeError(path, f"config: expected an object, got {json_kind(config)}")
        return {key: check_str(item, path, f"config.{key}") for key, item in config.items()}, None


class ConfigEntityChangeNotificationZNode:
    @staticmethod
    def path() -> str:
        return paths.CONFIG_CHANGES


class ConfigEntityChangeNotificationSequenceZNode(SequentialNotificationZNode[str]):
    """``/config/changes/config_change_N``: version 2 ``entity_path``; version 1 type + name still read."""

    VERSION = 2
    PARENT = paths.CONFIG_CHANGES
    PREFIX = paths.CONFIG_CHANGE_PREFIX

    @staticmethod
    def encode(entity_path: str) -> bytes:
        """``entity_path`` is ``<type>/<sanitized name>``, e.g. ``topics/foo``."""
        version = ConfigEntityChangeNotificationSequenceZNode.VERSION
        return dumps({"version": version, "entity_path": entity_path})

    @staticmethod
    def decode(data: bytes | None, path: str) -> str:
        """The changed entity as ``<type>/<name>`` whichever version wrote it (Kafka refuses any other version,
        and a missing one)."""
        return ConfigEntityChangeNotificationSequenceZNode.decode_versioned(data, path)[1]

    @staticmethod
    def decode_versioned(data: bytes | None, path: str) -> tuple[int, str]:
        """The notification's version and entity: Kafka's broker handles version 1 apart (its own log line, only
        ``topics`` and ``clients``)."""
        obj = parse_object(data, path)
        version = obj.version((1, 2))
        if version == 1:
            return 1, f"{obj.get_str('entity_type')}/{obj.get_str('entity_name')}"
        return 2, obj.get_str("entity_path")


class ClusterIdZNode:
    """``{"version":"1","id":"..."}``: note the version is a JSON *string*."""

    @staticmethod
    def path() -> str:
        return paths.CLUSTER_ID

    @staticmethod
    def encode(cluster_id: str) -> bytes:
        return dumps({"version": "1", "id": cluster_id})

    @staticmethod
    def decode(data: bytes | None, path: str = paths.CLUSTER_ID) -> str:
        return parse_object(data, path).get_str("id")  # Kafka reads no version


class FeatureZNode:
    """``{"features":{name:{"min_version_level":1,"max_version_level":2}},"version":1,"status":1}``.

    Missing ``features`` or ``status``, an unknown status or an invalid range is a decode error.
    """

    VERSION = 1
    READABLE_VERSIONS = range(1, INT32_MAX + 1)
    """Kafka 2.8 refuses a missing version or one below 1 and reads any later one as version 1."""

    @staticmethod
    def path() -> str:
        return paths.FEATURE

    @staticmethod
    def encode(value: FeatureZNodeData) -> bytes:
        """ZkData's ``mutable.Map``, in its hash order (`scala_mutable_map`): ``features``, ``version``,
        ``status``; the features map (Java maps from ``Features.toMap``) keeps our order."""
        return dumps(scala_mutable_map({
            "version": FeatureZNode.VERSION,
            "status": int(value.status),
            "features": {
                name: {"min_version_level": r.min_version_level, "max_version_level": r.max_version_level}
                for name, r in value.features
            },
        }))

    @staticmethod
    def decode(data: bytes | None, path: str = paths.FEATURE) -> FeatureZNodeData:
        obj = parse_object(data, path)
        obj.version(FeatureZNode.READABLE_VERSIONS)
        if obj.is_null_or_absent("features"):
            raise ZnodeDecodeError(path, "features map can not be absent")
        if obj.is_null_or_absent("status"):
            raise ZnodeDecodeError(path, "status can not be absent")
        status_code = obj.get_int("status")
        if status_code not in tuple(FeatureZNodeStatus):
            raise ZnodeDecodeError(path, f"malformed status {status_code}")
        features = obj.get_obj("features")
        ranges: list[tuple[str, FinalizedVersionRange]] = []
        for name, raw in features.items():
            rng = features.as_object(raw, f"features.{name}")
            try:
                ranges.append((name, FinalizedVersionRange(rng.get_int("min_version_level"),
                                                           rng.get_int("max_version_level"))))
            except ValueError as e:
                raise ZnodeDecodeError(path, f"features.{name}: {e}") from None
        return FeatureZNodeData(FeatureZNodeStatus(status_code), sorted_features(ranges))
