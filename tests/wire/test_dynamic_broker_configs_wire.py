"""The dynamic ``KafkaConfig`` properties beyond the log defaults (thread counts, the log cleaner, connection limits,
per-listener SSL/SASL, metric reporters) over a real socket, as Kafka 2.8.2's ``DynamicBrokerConfig`` treats them:
AlterConfigs / IncrementalAlterConfigs parse each value as its ``KafkaConfig`` type, run the reconfigurables' checks
against the broker's current config and refuse static properties (INVALID_REQUEST, "Invalid config value for
resource ..."); DescribeConfigs gives them their value, type and sensitivity (only a PASSWORD is sensitive).

They used to pass unchecked and then describe as sensitive with a null value, which locked ``configs --alter``
out of the broker (it wants every sensitive entry given again)."""

from __future__ import annotations

from tests.helpers import wait_until
from tests.integration.listening import Cluster

from zkcontroller.protocol.wire.alter_configs import INCREMENTAL_ALTER_CONFIGS, SET, AlterResource, ConfigChange
from zkcontroller.protocol.wire.describe_configs import ConfigResourceQuery
from zkcontroller.zk import paths

from .admin_fixture import address, admin_cluster_fixture  # noqa: F401 (the fixture)
from .test_alter_configs_wire import ALTER_CONFIGS, alter, errors
from .test_describe_configs_wire import by_name, describe

BROKER, INVALID_REQUEST = 4, 42
INT, LONG, DOUBLE, LIST, PASSWORD = 3, 5, 6, 7, 9
DYNAMIC_BROKER_CONFIG, DEFAULT_CONFIG = 2, 5
WRAPPED = ("Invalid value org.apache.kafka.common.config.ConfigException: {} for configuration Invalid dynamic "
           "configuration")


def _set(name: str, **configs: str) -> AlterResource:
    return AlterResource(BROKER, name, tuple(ConfigChange(k.replace("_", "."), v, SET) for k, v in configs.items()))


async def test_values_are_checked_as_kafka_checks_them(admin_cluster: Cluster) -> None:
    cluster, zk = admin_cluster
    server = cluster.running_brokers()[0]
    at, me = address(cluster, server), str(server.broker_id)
    label = f"Invalid config value for resource ConfigResource(type=BROKER, name='{me}'): "
    refused = {
        "num.io.threads=abc": "Invalid value abc for configuration num.io.threads: Not a number of type INT",
        "num.io.threads=0": "Invalid value 0 for configuration num.io.threads: Value must be at least 1",
        "num.io.threads=1000": WRAPPED.format("Dynamic thread count update validation failed for num.io.threads=1000, "
                                              "value should not be greater than double the current value 8"),
        "num.io.threads=3": WRAPPED.format("Dynamic thread count update validation failed for num.io.threads=3, value "
                                           "should be at least half the current value 8"),
        "num.replica.fetchers=0": WRAPPED.format("Dynamic thread count update validation failed for "
                                                 "num.replica.fetchers=0, value should be at least 1"),
        "log.cleaner.threads=0": WRAPPED.format("Log cleaner threads should be at least 1"),
        "log.cleaner.threads=3": WRAPPED.format("Log cleaner threads cannot be increased to more than double the "
                                                "current value 1"),
        "max.connections=0": WRAPPED.format("Invalid max.connections 0"),
        "log.cleaner.io.buffer.load.factor=x": ("Invalid value x for configuration log.cleaner.io.buffer.load.factor: "
                                                "Not a number of type DOUBLE"),
        "sasl.login.refresh.buffer.seconds=40000": ("Invalid value 40000 for configuration "
                                                    "sasl.login.refresh.buffer.seconds: Not a number of type SHORT"),
        "socket.send.buffer.bytes=1": "Cannot update these configs dynamically: Set(socket.send.buffer.bytes)",
        "ssl.keystore.location=/k": ("These security configs can be dynamically updated only per-listener using the "
                                     "listener prefix: HashSet(ssl.keystore.location)"),  # a mutable set
    }
    for entry, message in refused.items():
        key, value = entry.split("=")
        for api in (ALTER_CONFIGS, INCREMENTAL_ALTER_CONFIGS):
            results = await alter(at, api, 0, AlterResource(BROKER, me, (ConfigChange(key, value, SET),)))
            assert errors(results) == [(BROKER, me, INVALID_REQUEST, label + message)], (entry, api)
    default = await alter(at, ALTER_CONFIGS, 0, AlterResource(
        BROKER, "", (ConfigChange("listener.name.plaintext.ssl.keystore.location", "/k", SET),)))
    assert errors(default) == [(BROKER, "", INVALID_REQUEST, "Invalid config value for resource "
                                "ConfigResource(type=BROKER, name=''): Cannot update these configs at default cluster "
                                "level, broker id must be specified: "
                                "Set(listener.name.plaintext.ssl.keystore.location)")]
    password = await alter(at, ALTER_CONFIGS, 0, AlterResource(
        BROKER, me, (ConfigChange("listener.name.plaintext.plain.sasl.jaas.config", "x", SET),)))
    assert errors(password)[0][:3] == (BROKER, me, INVALID_REQUEST)  # Kafka stores it encrypted: not done here
    assert (errors(password)[0][3] or "").startswith(label + "Password encoder secret not configured")
    assert await zk.get_entity_configs(paths.ConfigType.BROKER, me) == {}  # nothing was written
    assert await zk.get_entity_configs(paths.ConfigType.BROKER, paths.DEFAULT_ENTITY) == {}


async def test_accepted_values_describe_with_their_type_not_as_sensitive(admin_cluster: Cluster) -> None:
    cluster, zk = admin_cluster
    server = cluster.running_brokers()[0]
    at, me = address(cluster, server), str(server.broker_id)
    configs = {"num.io.threads": "16", "log.cleaner.threads": "2", "max.connections": "100",
               "log.cleaner.io.buffer.load.factor": "0.5", "metric.reporters": "",
               "listener.name.plaintext.max.connections": "50"}
    results = await alter(at, ALTER_CONFIGS, 0, AlterResource(
        BROKER, me, tuple(ConfigChange(k, v, SET) for k, v in configs.items())))
    assert errors(results) == [(BROKER, me, 0, None)]
    assert await zk.get_entity_configs(paths.ConfigType.BROKER, me) == configs
    rm = server.replica_manager
    assert rm is not None
    await wait_until(lambda: rm.topic_configs.defaults.dynamic_broker.get("num.io.threads") == "16",
                     what="the broker took its dynamic configs up")

    # the thread pool's bounds are now relative to 16: 32 passes, 33 does not
    doubled = await alter(at, INCREMENTAL_ALTER_CONFIGS, 0, _set(me, num_io_threads="32"), validate_only=True)
    assert errors(doubled) == [(BROKER, me, 0, None)]
    beyond = await alter(at, INCREMENTAL_ALTER_CONFIGS, 0, _set(me, num_io_threads="33"), validate_only=True)
    assert errors(beyond)[0][3] is not None and "double the current value 16" in (errors(beyond)[0][3] or "")

    [result] = await describe(at, 3, ConfigResourceQuery(BROKER, me), synonyms=True)
    entries = by_name(result)
    io = entries["num.io.threads"]
    assert (io.value, io.is_sensitive, io.read_only, io.config_type, io.source) == (
        "16", False, False, INT, DYNAMIC_BROKER_CONFIG)
    assert [(s.value, s.source) for s in io.synonyms] == [("16", DYNAMIC_BROKER_CONFIG), ("8", DEFAULT_CONFIG)]
    factor = entries["log.cleaner.io.buffer.load.factor"]
    assert (factor.value, factor.is_sensitive, factor.config_type) == ("0.5", False, DOUBLE)
    per_listener = entries["listener.name.plaintext.max.connections"]
    assert (per_listener.value, per_listener.is_sensitive, per_listener.config_type) == ("50", False, INT)
    untouched = entries["num.network.threads"]
    assert (untouched.value, untouched.is_sensitive, untouched.source, untouched.config_type) == (
        "3", False, DEFAULT_CONFIG, INT)
    keystore = entries["ssl.keystore.password"]  # a PASSWORD stays sensitive, as in Kafka
    assert (keystore.value, keystore.is_sensitive, keystore.config_type, keystore.read_only) == (
        None, True, PASSWORD, False)
    assert (entries["metric.reporters"].config_type, entries["log.cleaner.backoff.ms"].config_type) == (LIST, LONG)
    assert not any(e.is_sensitive for e in entries.values() if e.name in configs)
