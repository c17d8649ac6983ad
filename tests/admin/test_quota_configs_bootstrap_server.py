"""``configs --entity-type users|clients|ips ... --bootstrap-server``: Kafka 2.8.2's ConfigCommand AdminClient
path for client quotas (DescribeClientQuotas, AlterClientQuotas) against in-process brokers on loopback, with
its messages for what it refuses. Every wait is bounded."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from click.testing import CliRunner, Result
from tests.integration.listening import listening_cluster

from zkcontroller.admin.bootstrap_quotas import java_hash_map_order
from zkcontroller.cli import main
from zkcontroller.cluster.listener import ListenerPorts
from zkcontroller.zk.kafka_zk_client import KafkaZkClient
from zkcontroller.zk.paths import ConfigType

pytestmark = [pytest.mark.usefixtures("restored_logging"), pytest.mark.timeout(120)]


@pytest.fixture(name="brokers")
async def brokers_fixture() -> AsyncIterator[tuple[KafkaZkClient, str]]:
    async with listening_cluster([1, 2], ListenerPorts(base=None, host="127.0.0.1"), 4000) as (cluster, zk):
        yield zk, ",".join(cluster.listeners[b].address or "" for b in (1, 2))


async def configs(bootstrap: str, *argv: str) -> Result:
    return await asyncio.to_thread(CliRunner().invoke, main, ["configs", "--bootstrap-server", bootstrap, *argv],
                                   env={"ZKCONTROLLER_ZOOKEEPER": None})


async def test_alter_and_describe_quotas(brokers: tuple[KafkaZkClient, str]) -> None:
    zk, bootstrap = brokers

    async def ok(*argv: str) -> str:
        result = await configs(bootstrap, *argv)
        assert result.exit_code == 0, result.output
        return result.output

    assert await ok("--entity-type", "users", "--entity-name", "alice", "--alter", "--add-config",
                    "producer_byte_rate=1024,consumer_byte_rate=2e3") == "Completed updating config for user alice.\n"
    assert await ok("--entity-type", "clients", "--entity-default", "--alter", "--add-config",
                    "request_percentage=50") == "Completed updating default config for clients in the cluster.\n"
    assert await ok("--entity-type", "users", "--entity-name", "alice", "--entity-type", "clients", "--entity-name",
                    "app", "--alter", "--add-config", "consumer_byte_rate=4096") == (
        "Completed updating config for user alice.\n")
    assert await ok("--entity-type", "ips", "--entity-name", "127.0.0.1", "--alter", "--add-config",
                    "connection_creation_rate=10") == "Completed updating config for ip 127.0.0.1.\n"
    assert await zk.get_entity_configs(ConfigType.USER, "alice") == {
        "producer_byte_rate": "1024", "consumer_byte_rate": "2000"}
    assert await zk.get_entity_configs(ConfigType.USER, "alice/clients/app") == {"consumer_byte_rate": "4096"}
    assert await zk.get_entity_configs(ConfigType.CLIENT, "<default>") == {"request_percentage": "50.0"}

    assert await ok("--entity-type", "users", "--entity-name", "alice", "--describe") == (
        "Quota configs for user-principal 'alice' are consumer_byte_rate=2000.0, producer_byte_rate=1024.0\n")
    assert await ok("--entity-type", "users", "--describe") == (  # strict: users alone, not a user's clients
        "Quota configs for user-principal 'alice' are consumer_byte_rate=2000.0, producer_byte_rate=1024.0\n")
    assert await ok("--entity-type", "users", "--entity-type", "clients", "--describe") == (
        "Quota configs for user-principal 'alice', client-id 'app' are consumer_byte_rate=4096.0\n")
    assert await ok("--entity-type", "clients", "--entity-default", "--describe") == (
        "Quota configs for the default client-id are request_percentage=50.0\n")
    assert await ok("--entity-type", "ips", "--describe") == (
        "Quota configs for ip '127.0.0.1' are connection_creation_rate=10.0\n")
    assert await ok("--entity-type", "users", "--entity-name", "nobody", "--describe") == ""

    assert await ok("--entity-type", "users", "--entity-name", "alice", "--alter", "--delete-config",
                    "producer_byte_rate") == "Completed updating config for user alice.\n"
    assert await zk.get_entity_configs(ConfigType.USER, "alice") == {"consumer_byte_rate": "2000"}
    again = await configs(bootstrap, "--entity-type", "users", "--entity-name", "alice", "--alter",
                          "--delete-config", "producer_byte_rate")
    assert (again.exit_code, again.output) == (1, "Error: Invalid config(s): producer_byte_rate\n")


@pytest.mark.parametrize(("argv", "message"), [
    (["--entity-type", "clients", "--entity-name", "c", "--add-config", "foo=1,producer_byte_rate=1"],
     "Only quota configs can be added for 'clients' using --bootstrap-server. Unexpected config names: Set(foo)"),
    (["--entity-type", "users", "--entity-name", "u", "--entity-type", "clients", "--entity-name", "c",
      "--delete-config", "SCRAM-SHA-256"],
     "Only quota configs can be deleted for 'clients' using --bootstrap-server. Unexpected config names: "
     "ArrayBuffer(SCRAM-SHA-256)"),
    (["--entity-type", "users", "--entity-name", "u", "--add-config", "retention.ms=1"],
     "Only quota and SCRAM credential configs can be added for 'users' using --bootstrap-server. Unexpected "
     "config names: Set(retention.ms)"),
    (["--entity-type", "users", "--entity-default", "--add-config", "SCRAM-SHA-256=[password=x]"],
     "The use of --entity-default or --user-defaults is not allowed with User SCRAM Credentials using "
     "--bootstrap-server."),
    (["--entity-type", "users", "--entity-name", "u", "--add-config",
      "SCRAM-SHA-256=[password=x],producer_byte_rate=1"],
     "Cannot alter both quota and SCRAM credential configs simultaneously for 'users' using --bootstrap-server."),
    (["--entity-type", "users", "--entity-name", "u", "--add-config", "SCRAM-SHA-512=[password=x]"],
     "SCRAM credentials are set through AlterUserScramCredentials, which these brokers do not serve: use "
     "--zookeeper for SCRAM-SHA-512"),
    (["--entity-type", "ips", "--entity-name", "127.0.0.1", "--add-config", "producer_byte_rate=1"],
     "Only connection quota configs can be added for 'ips' using --bootstrap-server. Unexpected config names: "
     "producer_byte_rate"),
    (["--entity-type", "users", "--entity-name", "u", "--entity-type", "clients", "--add-config",
      "producer_byte_rate=1"], "An entity name must be specified for every entity type"),
    (["--entity-type", "users", "--entity-name", "u", "--add-config", "producer_byte_rate=fast"],
     "Cannot parse quota configuration value for producer_byte_rate: fast"),
    (["--entity-type", "ips", "--entity-name", "127.0.0.1", "--add-config", "connection_creation_rate=1.5"],
     "Configuration connection_creation_rate must be a INT value"),  # the broker's refusal
    (["--entity-type", "users", "--entity-name", "u", "--entity-type", "topics", "--describe"],
     "Only 'users' and 'clients' entity types may be specified together"),
])
async def test_refused_before_or_by_the_broker(brokers: tuple[KafkaZkClient, str], argv: list[str],
                                               message: str) -> None:
    zk, bootstrap = brokers
    result = await configs(bootstrap, *argv, *([] if "--describe" in argv else ["--alter"]))
    assert result.exit_code == 1
    assert result.output.splitlines()[-1] == f"Error: {message}", result.output
    for kind in (ConfigType.USER, ConfigType.CLIENT, ConfigType.IP):
        assert await zk.get_children(f"/config/{kind}") == []  # nothing written


def test_entities_in_the_java_clients_hash_map_order() -> None:
    """``ClientQuotaEntity.hashCode`` is ``Objects.hash(entries)``; the describe lists entities in the order of
    the ``new HashMap<>(n)`` DescribeClientQuotasResponse fills, not the broker's. The expected order is what
    OpenJDK 17 printed for these entities put in this order."""
    entities = [*((("user", f"u{i}"),) for i in range(20)), (("client-id", None),),
                (("user", "alice"), ("client-id", "app"))]
    shown = [",".join(f"{t}={n}" for t, n in sorted(e)) for e in java_hash_map_order(entities, len(entities))]
    assert shown == ["user=u1", "user=u18", "user=u3", "user=u19", "user=u2", "user=u4", "user=u14", "user=u15",
                     "user=u16", "user=u10", "user=u11", "user=u12", "user=u13", "user=u8", "user=u9", "user=u17",
                     "user=u0", "client-id=app,user=alice", "user=u5", "client-id=None", "user=u7", "user=u6"]
