"""DescribeConfigs from an admin client (Kafka 2.8.2's ``KafkaApis.handleDescribeConfigsRequest`` and
``ConfigHelper.describeConfigs``, ZooKeeper mode), for a broker process or an in-process listener.

Any broker answers, for each resource in request order (`broker.config_helper` builds the entries):

- TOPIC: an invalid name is INVALID_TOPIC_EXCEPTION with ``Topic.validate``'s message; a topic this broker's
  metadata cache does not know UNKNOWN_TOPIC_OR_PARTITION (no message); else the topic's configs, its overrides
  read from ``/config/topics/<topic>`` (as Kafka's ``ZkConfigRepository``) over this broker's defaults (with
  the dynamic broker configs it keeps: sources DYNAMIC_BROKER_CONFIG / DYNAMIC_DEFAULT_BROKER_CONFIG). A
  malformed node or a value ConfigDef refuses is UNKNOWN_SERVER_ERROR (logged; no message, as Kafka sends none).
- BROKER: this broker's id gives its configs (every non-internal ``KafkaConfig`` property and whatever else it
  was given, dynamic values over server.properties); the empty name the
  cluster-wide dynamic defaults as this broker keeps them (Kafka's ``currentDynamicDefaultConfigs``: what it last
  read of ``/config/brokers/<default>``, cleaned as `clean_dynamic_configs` does; source
  DYNAMIC_DEFAULT_BROKER_CONFIG); another
  id is INVALID_REQUEST "Unexpected broker id, expected <id> or empty string, but received <name>", a name that
  is no integer INVALID_REQUEST "Broker id must be an integer, but it is: <name>".
- BROKER_LOGGER: this broker's id lists its ``kafka.*`` loggers and ``root`` with their effective levels (Kafka's
  ``Log4jController.loggers``); the empty name or another id is INVALID_REQUEST.
- with ``include_documentation`` (v3+) each TOPIC and BROKER entry carries its key's ConfigDef doc string (null
  for a key the ConfigDef lacks), as ``ConfigHelper`` does; without it, null.
- any other resource type makes the whole request fail, as Kafka's handler throws: every resource answers
  INVALID_REQUEST with ``Errors``' own message.

Logging as Kafka 2.8.2: a resource's ApiException is INFO, anything else ERROR, ``Error processing describe configs
request for resource DescribeConfigsResource(..)`` with the exception's line under it (``kafka.server.ConfigHelper``);
UNKNOWN_TOPIC_OR_PARTITION is an answer, not an exception, so not logged. The failed request is
``RequestHandlerHelper.handleError``'s ERROR ``[KafkaApi-N] Error when handling request: ..`` with the
InvalidRequestException under it (the handler raises `RequestFailed`; `KafkaApis` logs it with the request's
header and answers every resource). Reading a node Kafka reads silently as no
overrides is our WARN, under our own logger (``zkcontroller.broker.DescribeConfigs``, in server.log).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping

from zkcontroller.admin.zk_admin_manager import ConfigApiError, check_broker_id
from zkcontroller.broker.config_helper import (
    BROKER_LOGGER_RESOURCE,
    BROKER_RESOURCE,
    CONFIG_TYPES,
    DYNAMIC_BROKER_CONFIGS,
    DYNAMIC_DEFAULT_BROKER_CONFIG,
    TOPIC_RESOURCE,
    broker_config_type,
    broker_documentation,
    describe_broker,
    describe_topic,
    is_sensitive_type,
    kafka_order,
)
from zkcontroller.broker.dynamic_broker_config import clean_dynamic_configs
from zkcontroller.broker.kafka_apis import DescribeConfigsHandler
from zkcontroller.broker.log_config import LogDefaults
from zkcontroller.cluster.kafka_server import KafkaServer
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.wire.describe_configs import (
    ConfigEntry,
    ConfigResourceQuery,
    ConfigResourceResult,
    DescribeConfigsQuery,
    Synonym,
)
from zkcontroller.protocol.wire.record_sets import RequestFailed
from zkcontroller.runtime.log_lines import exception_line, kafka_level_name
from zkcontroller.zk import paths
from zkcontroller.zk.kafka_zk_client import KafkaZkClient
from zkcontroller.zk.log_config_def import TopicConfigError
from zkcontroller.zk.topic_names import topic_name_problem

log = logging.getLogger("kafka.server.ConfigHelper")
own_log = logging.getLogger("zkcontroller.broker.DescribeConfigs")
API_EXCEPTIONS = {int(Errors.INVALID_REQUEST): "org.apache.kafka.common.errors.InvalidRequestException",
                  int(Errors.INVALID_TOPIC_EXCEPTION): "org.apache.kafka.common.errors.InvalidTopicException"}
"""The Java ``ApiException`` behind each error a resource's `ConfigApiError` carries, for the logged line."""

INVALID_REQUEST_MESSAGE = ("This most likely occurs because of a request being malformed by the client library or "
                           "the message was sent to an incompatible broker. See the broker logs for more details.")
DYNAMIC_BROKER_LOGGER_CONFIG = 6


def describe_configs_handler(server: Callable[[], KafkaServer | None]) -> DescribeConfigsHandler:
    async def describe(query: DescribeConfigsQuery) -> list[ConfigResourceResult]:
        unexpected = [r for r in query.resources
                      if r.resource_type not in (TOPIC_RESOURCE, BROKER_RESOURCE, BROKER_LOGGER_RESOURCE)]
        if unexpected:  # thrown by the handler: KafkaApis.handle's handleError logs it, answers every resource
            r = unexpected[0]
            raise RequestFailed(f"Unexpected resource type {_type_name(r.resource_type)} for resource "
                                f"{r.resource_name}", "org.apache.kafka.common.errors.InvalidRequestException",
                                int(Errors.INVALID_REQUEST), answer_message=INVALID_REQUEST_MESSAGE)
        return [await _describe_one(server(), r, query.include_synonyms, query.include_documentation)
                for r in query.resources]

    return describe


def resource_data(r: ConfigResourceQuery) -> str:
    """The generated ``DescribeConfigsResource.toString`` Kafka's ``$resource`` prints."""
    keys = "null" if r.keys is None else f"[{', '.join(r.keys)}]"
    return f"DescribeConfigsResource(resourceType={r.resource_type}, resourceName='{r.resource_name}', " \
           f"configurationKeys={keys})"


def _type_name(resource_type: int) -> str:
    return {TOPIC_RESOURCE: "TOPIC", BROKER_RESOURCE: "BROKER", BROKER_LOGGER_RESOURCE: "BROKER_LOGGER"}.get(
        resource_type, "UNKNOWN")


async def _describe_one(server: KafkaServer | None, r: ConfigResourceQuery, include_synonyms: bool,
                        include_documentation: bool) -> ConfigResourceResult:
    try:
        entries = await _entries(server, r, include_synonyms, include_documentation)
    except ConfigApiError as e:
        if e.message is not None:  # an ApiException: "client errors at a lower level"
            log.info("Error processing describe configs request for resource %s\n%s: %s", resource_data(r),
                     API_EXCEPTIONS.get(e.error, "org.apache.kafka.common.errors.ApiException"), e.message)
        return ConfigResourceResult(r.resource_type, r.resource_name, e.error, e.message)
    except Exception as e:  # not an ApiException: UNKNOWN_SERVER_ERROR, no message (ApiError.fromThrowable)
        log.error("Error processing describe configs request for resource %s\n%s", resource_data(r),
                  exception_line(e))
        return ConfigResourceResult(r.resource_type, r.resource_name, int(Errors.UNKNOWN_SERVER_ERROR))
    return ConfigResourceResult(r.resource_type, r.resource_name, configs=tuple(entries))


async def _entries(server: KafkaServer | None, r: ConfigResourceQuery, include_synonyms: bool,
                   include_documentation: bool) -> list[ConfigEntry]:
    if server is None or server.zk is None or server.control_plane is None:
        raise RuntimeError("the broker has not started")
    static = server.config.static_configs
    if r.resource_type == TOPIC_RESOURCE:
        problem = topic_name_problem(r.resource_name)
        if problem is not None:
            raise ConfigApiError(int(Errors.INVALID_TOPIC_EXCEPTION), problem)
        if not server.control_plane.metadata_cache.contains_topic(r.resource_name):
            raise ConfigApiError(int(Errors.UNKNOWN_TOPIC_OR_PARTITION), None)  # no exception in Kafka: not logged
        overrides = await read_entity_configs(server.zk, paths.ConfigType.TOPIC, r.resource_name)
        try:
            return describe_topic(topic_log_defaults(server), overrides, include_synonyms=include_synonyms, keys=r.keys,
                                  include_documentation=include_documentation)
        except TopicConfigError as e:  # ConfigException: not an ApiException
            raise RuntimeError(f"{paths.topic_config_path(r.resource_name)}: {e}") from None
    if r.resource_type == BROKER_RESOURCE:
        if not r.resource_name:
            return _dynamic_defaults(await _kept_dynamic_defaults(server), include_synonyms, r.keys,
                                     include_documentation)
        check_broker_id(r.resource_name, server.broker_id, " or empty string,")
        if server.replica_manager is None:
            return describe_broker(static, include_synonyms=include_synonyms, keys=r.keys,
                                   include_documentation=include_documentation)
        current = server.replica_manager.topic_configs.defaults  # the dynamic levels as the broker keeps them
        return describe_broker(static, include_synonyms=include_synonyms, keys=r.keys,
                               dynamic_broker=current.dynamic_broker, dynamic_default=current.dynamic_default,
                               include_documentation=include_documentation)
    if not r.resource_name:
        raise ConfigApiError(int(Errors.INVALID_REQUEST), "Broker id must not be empty")
    check_broker_id(r.resource_name, server.broker_id, "")
    return _loggers(r.keys)


def topic_log_defaults(server: KafkaServer) -> LogDefaults:
    """What a topic's configs fall back to: the broker properties as the broker keeps them (dynamic levels too)."""
    if server.replica_manager is not None:
        return server.replica_manager.topic_configs.defaults
    return LogDefaults.from_properties(server.config.static_configs)


async def read_entity_configs(zk: KafkaZkClient | None, entity_type: str, name: str) -> dict[str, str]:
    """A config node as Kafka reads it (``fetchEntityConfig`` → ``ConfigEntityZNode.decode``): one that is not JSON
    or has no ``config`` object is no overrides, reported with a WARN naming it; a value that is not a string still
    raises (UNKNOWN_SERVER_ERROR, as it throws in Kafka)."""
    assert zk is not None
    configs, ignored = await zk.get_entity_configs_lenient(entity_type, name)
    if ignored is not None:
        own_log.warning("Reading the config %s as no overrides (as Kafka does): %s", ignored.path, ignored.reason)
    return configs


async def _kept_dynamic_defaults(server: KafkaServer) -> Mapping[str, str]:
    """``currentDynamicDefaultConfigs``: ``/config/brokers/<default>`` as this broker last took it up (cleaned by
    ``fromPersistentProps``: no static, per-broker or invalid key), not the node as it is now. Read and cleaned
    here only for a broker without a replica manager (it keeps no copy)."""
    if server.replica_manager is not None:
        return server.replica_manager.topic_configs.defaults.dynamic_default
    node = await read_entity_configs(server.zk, paths.ConfigType.BROKER, paths.DEFAULT_ENTITY)
    return clean_dynamic_configs(node, per_broker=False, path=paths.broker_config_path(paths.DEFAULT_ENTITY),
                                 report=False)  # read for one answer: Kafka logs these when it takes the node up


def _dynamic_defaults(configs: Mapping[str, str], include_synonyms: bool, keys: tuple[str, ...] | None,
                      include_documentation: bool = False) -> list[ConfigEntry]:
    """``createBrokerConfigEntry(perBrokerConfig = false)`` over ``currentDynamicDefaultConfigs``, in that Scala
    ``mutable.HashMap``'s order as if it had only ever held these keys (Kafka clears and refills it, keeping its
    table: after it once held 12 keys or more, its order is a larger table's)."""
    entries = []
    for name in kafka_order(configs, keys):
        value = configs[name]
        kind = broker_config_type(name)
        sensitive = is_sensitive_type(kind)
        shown = None if sensitive else value
        synonym = Synonym(name, shown, DYNAMIC_DEFAULT_BROKER_CONFIG)
        entries.append(ConfigEntry(name, shown, DYNAMIC_DEFAULT_BROKER_CONFIG,
                                   read_only=name not in DYNAMIC_BROKER_CONFIGS, is_sensitive=sensitive,
                                   config_type=CONFIG_TYPES[kind] if kind is not None else 0,
                                   synonyms=(synonym,) if include_synonyms else (),
                                   documentation=broker_documentation(name) if include_documentation else None))
    return entries


def _loggers(keys: tuple[str, ...] | None) -> list[ConfigEntry]:
    """``Log4jController.loggers``: ``root`` and every ``kafka.*`` logger, with its effective level's name."""
    names = sorted(n for n in logging.Logger.manager.loggerDict if n == "kafka" or n.startswith("kafka."))
    levels = {"root": logging.getLogger().getEffectiveLevel()}
    levels.update({n: logging.getLogger(n).getEffectiveLevel() for n in names})
    return [ConfigEntry(n, kafka_level_name(level), DYNAMIC_BROKER_LOGGER_CONFIG)
            for n, level in levels.items() if not keys or n in keys]
