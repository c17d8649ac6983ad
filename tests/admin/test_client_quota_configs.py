"""``zkcontroller configs --entity-type users|clients|ips`` as ``kafka-configs --zookeeper`` (Kafka 2.8.2's
ConfigCommand and AdminZkClient): where the quotas are stored, the notifications, Kafka's validation and
messages, and ``Sanitizer``'s encoding of the names."""

from __future__ import annotations

import json

import pytest
from tests.contract.admin.test_admin_cli import Cli, cli  # noqa: F401  (the fixture, on a real ZooKeeper)

from zkcontroller.admin.client_quotas import (
    ConfigEntity,
    Entity,
    QuotaConfigsError,
    alter_quota_config,
    describe_quota_configs,
    parse_quota_entity,
    scram_credential,
)
from zkcontroller.admin.configs import configs
from zkcontroller.admin.deprecation import ZOOKEEPER_DEPRECATED
from zkcontroller.zk import paths
from zkcontroller.zk.kafka_zk_client import KafkaZkClient
from zkcontroller.zk.quota_configs import desanitize, sanitize

N = ZOOKEEPER_DEPRECATED + "\n"


@pytest.mark.parametrize(("name", "stored"), [
    ("User:alice", "User%3Aalice"), ("a b", "a%20b"), ("a*b", "a%2Ab"), ("x~y", "x%7Ey"), ("é", "%C3%A9"),
    ("CN=x,O=y", "CN%3Dx%2CO%3Dy"), ("a.b-c_d", "a.b-c_d"),
])
def test_sanitizer_is_kafkas_url_encoding(name: str, stored: str) -> None:
    assert sanitize(name) == stored
    assert desanitize(stored) == name


def test_desanitize_reads_plus_as_space_and_refuses_a_broken_escape() -> None:
    assert desanitize("a+b") == "a b"
    with pytest.raises(ValueError, match="Incomplete trailing escape"):
        desanitize("a%4")
    with pytest.raises(ValueError, match="Illegal hex characters"):
        desanitize("a%zz")


def test_the_user_comes_first_whichever_type_was_typed_first() -> None:
    pair = parse_quota_entity(["clients", "users"], ["c 1", "User:a"], alter=True)
    assert pair == ConfigEntity(Entity("users", "User%3Aa"), Entity("clients", "c%201"))
    assert pair.full_sanitized_name == "User%3Aa/clients/c%201"
    assert str(pair) == "user-principal 'User:a', client-id 'c 1'"
    assert str(parse_quota_entity(["users", "clients"], ["", ""], alter=True)) == \
        "default user-principal, default client-id"
    every_client_of_a = parse_quota_entity(["users", "clients"], ["a"], alter=False)
    assert every_client_of_a.child == Entity("clients", None)
    with pytest.raises(QuotaConfigsError, match="--entity-name or --entity-default must be specified with each "
                                                "--entity-type for --alter"):
        parse_quota_entity(["users", "clients"], ["a"], alter=True)


def test_scram_password_becomes_a_salted_credential() -> None:
    stored = scram_credential("SCRAM-SHA-256", "iterations=8192,password=secret")
    fields = dict(f.split("=", 1) for f in stored.split(","))
    assert list(fields) == ["salt", "stored_key", "server_key", "iterations"] and fields["iterations"] == "8192"
    with pytest.raises(QuotaConfigsError, match="Iterations 10 is less than the minimum 4096 required for "
                                                "SCRAM_SHA_512"):
        scram_credential("SCRAM-SHA-512", "iterations=10,password=x")
    with pytest.raises(QuotaConfigsError, match="Invalid credential property SCRAM_SHA_256=secret"):
        scram_credential("SCRAM-SHA-256", "secret")


async def _notifications(zk: KafkaZkClient) -> list[dict[str, object]]:
    changes = sorted(await zk.get_children(paths.CONFIG_CHANGES))
    return [json.loads((await zk.get_data_and_stat(f"{paths.CONFIG_CHANGES}/{c}"))[0])  # type: ignore[index]
            for c in changes]


async def test_quotas_are_stored_where_kafka_stores_them(zk: KafkaZkClient) -> None:
    """On the embedded store and a real ZooKeeper: each entity's node and its version-2 notification."""
    for types, names, node in [
        (["users"], ["User:alice"], "/config/users/User%3Aalice"),
        (["clients"], ["my client"], "/config/clients/my%20client"),
        (["users", "clients"], ["User:alice", "c"], "/config/users/User%3Aalice/clients/c"),
        (["users", "clients"], ["", ""], "/config/users/<default>/clients/<default>"),
        (["users"], [""], "/config/users/<default>"),
        (["ips"], ["127.0.0.1"], "/config/ips/127.0.0.1"),
    ]:
        key = "connection_creation_rate" if types == ["ips"] else "producer_byte_rate"
        entity = parse_quota_entity(types, names, alter=True)
        assert await alter_quota_config(zk, entity, {key: "1024"}, []) == {key: "1024"}
        data, _ = await zk.get_data_and_stat(node)  # type: ignore[misc]
        assert json.loads(data) == {"version": 1, "config": {key: "1024"}}
    assert [n["entity_path"] for n in await _notifications(zk)] == [
        "users/User%3Aalice", "clients/my%20client", "users/User%3Aalice/clients/c",
        "users/<default>/clients/<default>", "users/<default>", "ips/127.0.0.1"]
    assert {n["version"] for n in await _notifications(zk)} == {2}

    every_user = await describe_quota_configs(zk, parse_quota_entity(["users"], [], alter=False))
    assert sorted((str(e), c) for e, c in every_user) == [  # not the user node holding only its clients' quotas
        ("default user-principal", {"producer_byte_rate": "1024"}),
        ("user-principal 'User:alice'", {"producer_byte_rate": "1024"})]
    pairs = await describe_quota_configs(zk, parse_quota_entity(["users", "clients"], [], alter=False))
    assert sorted(str(e) for e, _ in pairs) == ["default user-principal, default client-id",
                                                "user-principal 'User:alice', client-id 'c'"]


async def test_kafkas_validation_of_quota_keys_and_values(zk: KafkaZkClient) -> None:
    user = parse_quota_entity(["users"], ["u"], alter=True)
    client = parse_quota_entity(["clients"], ["c"], alter=True)
    default_user = parse_quota_entity(["users"], [""], alter=True)
    for entity, add, message in [
        (client, {"producer_byte_rate": "x"},
         "Invalid value x for configuration producer_byte_rate: Not a number of type LONG"),
        (client, {"request_percentage": "1.5.1"},
         "Invalid value 1.5.1 for configuration request_percentage: Not a number of type DOUBLE"),
        (client, {"retention.ms": "1"}, "requirement failed: Unknown Dynamic Configuration: Set(retention.ms)."),
        (client, {"SCRAM-SHA-256": "password=p"},
         "requirement failed: Unknown Dynamic Configuration: Set(SCRAM-SHA-256)."),  # users only
        (default_user, {"SCRAM-SHA-256": "password=p"},  # the default user takes the client configs
         "requirement failed: Unknown Dynamic Configuration: Set(SCRAM-SHA-256)."),
        (parse_quota_entity(["ips"], ["::1"], alter=True), {"connection_creation_rate": "-1"},
         "Invalid value -1 for configuration connection_creation_rate: Value must be at least 0"),
    ]:
        with pytest.raises(QuotaConfigsError) as refused:
            await alter_quota_config(zk, entity, add, [])
        assert str(refused.value) == message
    with pytest.raises(QuotaConfigsError, match=r"Invalid config\(s\): consumer_byte_rate"):
        await alter_quota_config(zk, user, {}, ["consumer_byte_rate"])
    assert await zk.get_children(paths.CONFIG_CHANGES) == []

    kept = await alter_quota_config(zk, user, {"SCRAM-SHA-256": "password=p", "producer_byte_rate": "-5",
                                               "request_percentage": "12.5", "controller_mutation_rate": "3"}, [])
    assert kept["SCRAM-SHA-256"].startswith("salt=") and kept["producer_byte_rate"] == "-5"
    assert await alter_quota_config(zk, user, {}, ["SCRAM-SHA-256", "request_percentage",
                                                   "controller_mutation_rate"]) == {"producer_byte_rate": "-5"}


@pytest.mark.zookeeper
async def test_the_command_alters_and_describes_as_kafka_configs(cli: Cli) -> None:  # noqa: F811
    altered = await cli(configs, "--alter", "--entity-type", "users", "--entity-name", "User:alice",
                        "--add-config", "producer_byte_rate=1024,consumer_byte_rate=2048")
    assert (altered.exit_code, altered.output) == (
        0, f"{N}Completed updating config for entity: user-principal 'User:alice'.\n")
    altered = await cli(configs, "--alter", "--entity-type", "clients", "--entity-default", "--entity-type",
                        "users", "--entity-name", "User:alice", "--add-config", "request_percentage=50")
    assert (altered.exit_code, altered.output) == (
        0, f"{N}Completed updating config for entity: user-principal 'User:alice', default client-id.\n")
    assert await cli.zk.get_entity_configs("users", "User%3Aalice/clients/<default>") == {"request_percentage": "50"}

    described = await cli(configs, "--describe", "--entity-type", "users", "--entity-name", "User:alice")
    assert (described.exit_code, described.output) == (
        0, f"{N}Configs for user-principal 'User:alice' are producer_byte_rate=1024,consumer_byte_rate=2048\n")
    described = await cli(configs, "--describe", "--entity-type", "users", "--entity-type", "clients")
    assert described.output == f"{N}Configs for user-principal 'User:alice', default client-id are " \
                               "request_percentage=50\n"
    described = await cli(configs, "--describe", "--entity-type", "clients")
    assert (described.exit_code, described.output) == (0, N)

    for args, message in [
        (("--entity-type", "clients", "--entity-name", "c", "--add-config", "producer_byte_rate=fast"),
         "Invalid value fast for configuration producer_byte_rate: Not a number of type LONG"),
        (("--entity-type", "users", "--entity-type", "clients", "--entity-name", "u", "--add-config", "a=1"),
         "--entity-name or --entity-default must be specified with each --entity-type for --alter"),
        (("--entity-type", "clients", "--entity-name", "c", "--add-config", "x=1"),
         "requirement failed: Unknown Dynamic Configuration: Set(x)."),
    ]:
        result = await cli(configs, "--alter", *args)
        assert (result.exit_code, result.output) == (1, f"{N}Error: {message}\n"), args

    for args, message in [
        (("--describe", "--entity-type", "users", "--entity-type", "brokers"),
         "Only 'users' and 'clients' entity types may be specified together"),
        (("--describe", "--entity-type", "ips", "--entity-name", "no such host.invalid"),
         "The entity name for ips must be a valid IP or resolvable host, but it is: no such host.invalid"),
        (("--alter", "--entity-type", "clients", "--add-config", "producer_byte_rate=1"),
         "an entity-name or default entity must be specified with --alter of users, clients, brokers or ips"),
    ]:
        result = await cli(configs, *args)
        assert result.exit_code == 1 and result.output.endswith(f"Error: {message}\n"), (args, result.output)

    altered = await cli(configs, "--alter", "--entity-type", "ips", "--entity-default", "--add-config",
                        "connection_creation_rate=10")
    assert (altered.exit_code, altered.output) == (0, f"{N}Completed updating config for entity: default ips.\n")
