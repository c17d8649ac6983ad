"""AlterConfigs and IncrementalAlterConfigs from an admin client (Kafka 2.8.2's ``KafkaApis.handleAlterConfigsRequest``,
``handleIncrementalAlterConfigsRequest`` and ``ZkAdminManager.alterConfigs``/``incrementalAlterConfigs``, ZooKeeper
mode), for a broker process or an in-process listener. The rules are `admin.zk_admin_manager`'s; the writes
are the admin tool's (``zkcontroller configs --alter``): `admin.topics.change_topic_config` and
`admin.configs.change_broker_config`, each a config node and a ``/config/changes`` notification that every broker
(`broker.topic_config_manager`) and the controller follow. ``validate_only`` writes nothing.

Request-level: a resource type other than TOPIC, BROKER (and, for the incremental API, BROKER_LOGGER) fails the
whole request, every resource answering INVALID_REQUEST "Unexpected resource type UNKNOWN" (AlterConfigs:
"AlterConfigs is deprecated and does not support the resource type BROKER_LOGGER" for that type). A resource
named twice counts once, with its last entry (Kafka's ``toMap``); the answers follow the request's order, as
Kafka's for up to four resources (beyond, its hash map's order).

Per resource, in Kafka's order:

- TOPIC: AlterConfigs' entries are the topic's whole new config, IncrementalAlterConfigs' operations apply to
  the stored overrides (`prepare_incremental`). A topic this broker's metadata cache does not know is
  UNKNOWN_TOPIC_OR_PARTITION "The topic '<t>' does not exist."; then ``Topic.validate``, existence in ZooKeeper
  and ``LogConfig.validate`` (an unknown name INVALID_CONFIG, a bad value INVALID_REQUEST "Invalid config value
  for resource ConfigResource(type=TOPIC, name='<t>'): ...").
- BROKER: the empty name is the cluster default (``/config/brokers/<default>``), else this broker's id (another
  id or a non-integer is INVALID_REQUEST). AlterConfigs' entries replace the node; the incremental operations
  apply to what the broker keeps of it (`clean_dynamic_configs`). ``DynamicBrokerConfig.validate`` refuses a
  static config, an SSL config without its listener prefix, a bad value, at the default level a per-broker one,
  and a change the broker's reconfigurables refuse (thread counts, log cleaner threads, connection limits; all
  INVALID_REQUEST, wrapped); a password config is refused on writing (not encrypted here). Keys Kafka does not
  define are stored as custom configs. APPEND and SUBTRACT look the key up among all of ``KafkaConfig``'s
  (`KAFKA_CONFIG_KEYS`), as Kafka does: a non-LIST one is INVALID_REQUEST, one it lacks UNKNOWN_SERVER_ERROR.
- BROKER_LOGGER (incremental only): this broker's id or the empty name; SET/DELETE set Python loggers' levels
  (`admin.log4j_controller`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from zkcontroller.admin.admin_manager_log import AdminManagerLog
from zkcontroller.admin.configs import change_broker_config
from zkcontroller.admin.errors import InvalidConfigError, InvalidTopicError, UnknownTopicError
from zkcontroller.admin.log4j_controller import alter_log_levels, validate_log_levels
from zkcontroller.admin.topics import change_topic_config
from zkcontroller.admin.zk_admin_manager import (
    RESOURCE_TYPE_NAMES,
    TOPIC_CONFIG_KEYS,
    BrokerLevels,
    ConfigApiError,
    InvalidConfigValue,
    broker_id_of,
    check_changes,
    check_passwords,
    prepare_incremental,
    resource_label,
    validate_broker,
    validate_topic,
)
from zkcontroller.broker.config_helper import (
    BROKER_LOGGER_RESOURCE,
    BROKER_RESOURCE,
    KAFKA_CONFIG_KEYS,
    TOPIC_RESOURCE,
)
from zkcontroller.broker.dynamic_broker_config import clean_dynamic_configs
from zkcontroller.cluster.admin_apis.describe_configs import read_entity_configs
from zkcontroller.cluster.kafka_server import KafkaServer
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.wire.alter_configs import (
    OP_NAMES,
    AlterConfigsQuery,
    AlterResource,
    AlterResult,
    ConfigChange,
)
from zkcontroller.protocol.wire.record_sets import RequestFailed
from zkcontroller.zk import paths
from zkcontroller.zk.kafka_zk_client import KafkaZkClient
from zkcontroller.zk.topic_names import topic_name_problem
from zkcontroller.zk.znodes import TopicZNode

AlterConfigsHandler = Callable[[AlterConfigsQuery], Awaitable[list[AlterResult]]]


def alter_configs_handler(server: Callable[[], KafkaServer | None]) -> AlterConfigsHandler:
    async def alter(query: AlterConfigsQuery) -> list[AlterResult]:
        refused = _request_error(query)
        if refused is not None:  # thrown by the handler: KafkaApis.handle's handleError answers every resource
            raise RequestFailed(refused, "org.apache.kafka.common.errors.InvalidRequestException",
                                int(Errors.INVALID_REQUEST), answer_message=True)
        last = {(r.resource_type, r.resource_name): r for r in query.resources}
        return [await _alter_one(server(), r, query.validate_only, query.incremental) for r in last.values()]

    return alter


def _request_error(query: AlterConfigsQuery) -> str | None:
    """The handler's own ``InvalidRequestException``, which fails every resource (``getErrorResponse``)."""
    for r in query.resources:
        if r.resource_type == BROKER_LOGGER_RESOURCE and not query.incremental:
            return "AlterConfigs is deprecated and does not support the resource type BROKER_LOGGER"
        if r.resource_type not in RESOURCE_TYPE_NAMES:
            return "Unexpected resource type UNKNOWN"
    return None


async def _alter_one(server: KafkaServer | None, r: AlterResource, validate_only: bool,
                     incremental: bool) -> AlterResult:
    log = AdminManagerLog(server.broker_id if server is not None else -1)
    try:
        check_changes(r.configs, incremental=incremental)
        if server is None or server.zk is None or server.control_plane is None:
            raise RuntimeError("the broker has not started")
        if r.resource_type == TOPIC_RESOURCE:
            await _alter_topic(server, server.zk, r, validate_only, incremental)
        elif r.resource_type == BROKER_RESOURCE:
            await _alter_broker(server, server.zk, r, validate_only, incremental)
        else:
            broker_id_of(r.resource_name, server.broker_id)
            validate_log_levels(r.configs)
            if not validate_only:
                alter_log_levels(r.configs, log)
    except InvalidConfigValue as e:
        message = e.wrapped(r.resource_type, r.resource_name)
        log.info(message)
        return AlterResult(r.resource_type, r.resource_name, int(Errors.INVALID_REQUEST), message)
    except ConfigApiError as e:
        log.info("Error processing alter configs request for resource %s, config %s: %s",
                 resource_label(r.resource_type, r.resource_name), _loggable(r), e.message)
        return AlterResult(r.resource_type, r.resource_name, e.error, e.message)
    except Exception as e:  # not an ApiException: UNKNOWN_SERVER_ERROR, no message (ApiError.fromThrowable)
        log.error("Error processing alter configs request for resource %s, config %s: %s: %s",
                  resource_label(r.resource_type, r.resource_name), _loggable(r), type(e).__name__, e)
        return AlterResult(r.resource_type, r.resource_name, int(Errors.UNKNOWN_SERVER_ERROR))
    return AlterResult(r.resource_type, r.resource_name)


def _loggable(r: AlterResource) -> str:
    return ",".join(f"{OP_NAMES.get(c.op, c.op)}:{c.name}={c.value}" for c in r.configs)


async def _alter_topic(server: KafkaServer, zk: KafkaZkClient, r: AlterResource, validate_only: bool,
                       incremental: bool) -> None:
    topic = r.resource_name
    if incremental:  # Kafka reads the stored overrides first (an invalid name has none here)
        stored = await read_entity_configs(zk, paths.ConfigType.TOPIC, topic) \
            if topic_name_problem(topic) is None else {}
        configs = prepare_incremental(r.configs, stored, TOPIC_CONFIG_KEYS)
    else:
        configs = _entries(r.configs)
    assert server.control_plane is not None
    if not server.control_plane.metadata_cache.contains_topic(topic):
        raise ConfigApiError(int(Errors.UNKNOWN_TOPIC_OR_PARTITION), f"The topic '{topic}' does not exist.")
    problem = topic_name_problem(topic)  # validateTopicConfig: Topic.validate, then existence, then the values
    if problem is not None:
        raise ConfigApiError(int(Errors.INVALID_TOPIC_EXCEPTION), problem)
    if not await zk.path_exists(TopicZNode.path(topic)):
        raise ConfigApiError(int(Errors.UNKNOWN_TOPIC_OR_PARTITION), f"Topic '{topic}' does not exist.")
    validate_topic(configs)
    if validate_only:
        return
    AdminManagerLog(server.broker_id).info("Updating topic %s with new configuration : %s", topic,
                                           ",".join(f"{k}={v}" for k, v in configs.items()))
    try:
        await change_topic_config(zk, topic, configs)
    except UnknownTopicError as e:  # deleted meanwhile
        raise ConfigApiError(int(Errors.UNKNOWN_TOPIC_OR_PARTITION), str(e)) from None
    except InvalidTopicError as e:
        raise ConfigApiError(int(Errors.INVALID_TOPIC_EXCEPTION), str(e)) from None
    except InvalidConfigError as e:  # validated above: not expected
        raise RuntimeError(str(e)) from None


async def _alter_broker(server: KafkaServer, zk: KafkaZkClient, r: AlterResource, validate_only: bool,
                        incremental: bool) -> None:
    broker_id = broker_id_of(r.resource_name, server.broker_id)
    entity = paths.DEFAULT_ENTITY if broker_id is None else str(broker_id)
    if incremental:
        stored = await read_entity_configs(zk, paths.ConfigType.BROKER, entity)
        kept = clean_dynamic_configs(stored, per_broker=broker_id is not None,
                                     path=paths.config_entity_path(paths.ConfigType.BROKER, entity))
        configs = prepare_incremental(r.configs, kept, KAFKA_CONFIG_KEYS)
    else:
        configs = _entries(r.configs)
    validate_broker(configs, per_broker=broker_id is not None, levels=_levels(server))
    if validate_only:
        return
    check_passwords(configs, per_broker=broker_id is not None)
    rendered = ",".join(f"{k}={v}" for k, v in configs.items())
    log = AdminManagerLog(server.broker_id)
    if broker_id is None:
        log.info("Updating brokers with new configuration : %s", rendered)
    else:
        log.info("Updating broker %d with new configuration : %s", broker_id, rendered)
    await change_broker_config(zk, entity, configs)


def _levels(server: KafkaServer) -> BrokerLevels:
    """The broker's config as it stands, which its reconfigurables check a change against."""
    if server.replica_manager is None:
        return BrokerLevels(server.config.static_configs, {}, {})
    kept = server.replica_manager.topic_configs.defaults
    return BrokerLevels(server.config.static_configs, kept.dynamic_default, kept.dynamic_broker)


def _entries(changes: Sequence[ConfigChange]) -> dict[str, str]:
    """AlterConfigs' entries as Kafka's ``Properties``: the last value of a key named twice (null values were
    refused by `check_changes`)."""
    return {c.name: c.value for c in changes if c.value is not None}
