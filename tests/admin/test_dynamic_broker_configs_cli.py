"""``zkcontroller configs --entity-type brokers`` with the dynamic ``KafkaConfig`` properties beyond the log defaults
(``num.io.threads``, ``log.cleaner.threads``, ``max.connections``, per-listener SSL...), as kafka-configs 2.8.2 meets
them: through a running broker (``--bootstrap-server``) a bad value, a change the broker's reconfigurables refuse or
a static property is refused; an accepted one describes with its value, so a later ``--alter`` of another key works
(it used to describe as sensitive with a null value, and ``--alter`` then wanted it given again: a lock-out).
Through ``--zookeeper`` (broker down) the values and names are checked as ConfigCommand's
``preProcessBrokerConfigs`` and ``AdminZkClient.changeBrokerConfig`` check them."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from click.testing import CliRunner, Result
from tests.contract.admin.test_admin_cli import Cli, cli  # noqa: F401  (the fixture, on a real ZooKeeper)
from tests.integration.listening import listening_cluster

from zkcontroller.admin.configs import configs as configs_command
from zkcontroller.admin.deprecation import ZOOKEEPER_DEPRECATED
from zkcontroller.cli import main
from zkcontroller.cluster.listener import ListenerPorts
from zkcontroller.cluster.local_cluster import LocalCluster
from zkcontroller.zk import paths
from zkcontroller.zk.kafka_zk_client import KafkaZkClient
from zkcontroller.zk.paths import ConfigType

pytestmark = [pytest.mark.usefixtures("restored_logging"), pytest.mark.timeout(120)]

N = ZOOKEEPER_DEPRECATED + "\n"


@pytest.fixture(name="brokers")
async def brokers_fixture() -> AsyncIterator[tuple[LocalCluster, KafkaZkClient, str]]:
    async with listening_cluster([1, 2], ListenerPorts(base=None, host="127.0.0.1"), 4000) as (cluster, zk):
        yield cluster, zk, cluster.listeners[2].address or ""


async def configs(*argv: str) -> Result:
    return await asyncio.to_thread(CliRunner().invoke, main, ["configs", *argv],
                                   env={"ZKCONTROLLER_ZOOKEEPER": None})


async def test_bootstrap_server_checks_values_and_no_longer_locks_the_broker_out(
        brokers: tuple[LocalCluster, KafkaZkClient, str]) -> None:
    _cluster, zk, bootstrap = brokers
    two = ["--entity-type", "brokers", "--entity-name", "2", "--bootstrap-server", bootstrap]
    resource = "Invalid config value for resource ConfigResource(type=BROKER, name='2'): "
    for add, message in [
        ("num.io.threads=abc", "Invalid value abc for configuration num.io.threads: Not a number of type INT"),
        ("num.io.threads=1000", "Invalid value org.apache.kafka.common.config.ConfigException: Dynamic thread count "
                                "update validation failed for num.io.threads=1000, value should not be greater than "
                                "double the current value 8 for configuration Invalid dynamic configuration"),
        ("log.cleaner.threads=0", "Invalid value org.apache.kafka.common.config.ConfigException: Log cleaner threads "
                                  "should be at least 1 for configuration Invalid dynamic configuration"),
        ("broker.rack=r1", "Cannot update these configs dynamically: Set(broker.rack)"),
    ]:
        refused = await configs("--alter", "--add-config", add, *two)
        assert refused.exit_code == 1, (add, refused.output)
        assert resource + message in refused.output, (add, refused.output)
    assert await zk.get_entity_configs(ConfigType.BROKER, "2") == {}

    for add in ("num.io.threads=16", "log.cleaner.threads=2", "max.connections=100"):  # each alter re-sends the rest
        altered = await configs("--alter", "--add-config", add, *two)
        assert (altered.exit_code, altered.output) == (0, "Completed updating config for broker 2.\n"), add
    assert await zk.get_entity_configs(ConfigType.BROKER, "2") == {
        "num.io.threads": "16", "log.cleaner.threads": "2", "max.connections": "100"}
    described = await configs("--describe", *two)
    assert described.exit_code == 0, described.output
    assert "  num.io.threads=16 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:num.io.threads=16, " \
           "DEFAULT_CONFIG:num.io.threads=8}" in (
        described.output.splitlines())
    everything = await configs("--describe", "--all", *two)
    assert "  log.cleaner.threads=2 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:log.cleaner.threads=2, " \
           "DEFAULT_CONFIG:log.cleaner.threads=1}" in everything.output.splitlines()
    assert "  num.network.threads=3 sensitive=false synonyms={DEFAULT_CONFIG:num.network.threads=3}" in (
        everything.output.splitlines())
    deleted = await configs("--alter", "--delete-config", "num.io.threads,log.cleaner.threads", *two)
    assert deleted.exit_code == 0, deleted.output
    assert await zk.get_entity_configs(ConfigType.BROKER, "2") == {"max.connections": "100"}


@pytest.mark.zookeeper
async def test_zookeeper_path_checks_values_and_names(cli: Cli) -> None:  # noqa: F811
    """Broker 4 is not registered, so ZooKeeper may carry its dynamic configs; brokers 1-3 are."""
    four = ("--alter", "--entity-type", "brokers", "--entity-name", "4")
    for add, message in [
        ("num.io.threads=abc", "Invalid value abc for configuration num.io.threads: Not a number of type INT"),
        ("log.cleaner.threads=-1", "Invalid value -1 for configuration log.cleaner.threads: Value must be at least 0"),
        ("ssl.client.auth=maybe", "Invalid value maybe for configuration ssl.client.auth: String must be one of: "
                                  "required, requested, none"),
        ("socket.send.buffer.bytes=1", "Cannot update these configs dynamically: Set(socket.send.buffer.bytes)"),
        ("ssl.keystore.location=/k", "These security configs can be dynamically updated only per-listener using the "
                                     "listener prefix: HashSet(ssl.keystore.location)"),  # a mutable set
        ("listener.name.plaintext.ssl.keystore.password=p",
         "password.encoder.secret must be specified to update Set(listener.name.plaintext.ssl.keystore.password). "
         "Other password encoder configs like cipher algorithm and iterations may also be specified to override the "
         "default encoding parameters. Password encoder configs will not be persisted in ZooKeeper."),
    ]:
        result = await cli(configs_command, *four, "--add-config", add)
        assert (result.exit_code, result.output) == (1, f"{N}Error: {message}\n"), add
    assert await cli.zk.get_children(paths.CONFIG_CHANGES) == []  # the refusals wrote nothing

    # no reconfigurable runs on this path (the broker is down): Kafka takes 1000 threads here
    stored = await cli(configs_command, *four, "--add-config", "num.io.threads=1000,max.connections=5")
    assert (stored.exit_code, stored.output) == (0, f"{N}Completed updating config for entity: brokers '4'.\n")
    assert await cli.zk.get_entity_configs(ConfigType.BROKER, "4") == {"num.io.threads": "1000",
                                                                      "max.connections": "5"}
    running = await cli(configs_command, "--alter", "--entity-type", "brokers", "--entity-name", "1",
                        "--add-config", "num.io.threads=9")
    assert running.exit_code == 1 and "when broker 1 is running" in running.output
    throttle = await cli(configs_command, "--alter", "--entity-type", "brokers", "--entity-name", "1",
                         "--add-config", "leader.replication.throttled.rate=-5")
    assert (throttle.exit_code, throttle.output) == (
        1, f"{N}Error: Invalid value -5 for configuration leader.replication.throttled.rate: Value must be at least "
           "0\n")
