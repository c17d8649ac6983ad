"""``zkcontroller configs`` as a kafka-configs user meets it: ConfigCommand's ``--add-config`` grammar, its
``--topic`` shortcut, describing every topic, and its messages (checked against Kafka 2.8.2's ConfigCommand)."""

from __future__ import annotations

import pytest
from tests.contract.admin.test_admin_cli import Cli, cli  # noqa: F401  (the fixture, on a real ZooKeeper)

from zkcontroller.admin.cli import topics
from zkcontroller.admin.configs import (
    BrokerRunningError,
    InvalidConfigsError,
    configs,
    parse_add_config,
    parse_broker,
    parse_delete_config,
)
from zkcontroller.admin.deprecation import ZOOKEEPER_DEPRECATED
from zkcontroller.admin.errors import AdminError
from zkcontroller.admin.java_numbers import java_parse_int
from zkcontroller.zk import paths

N = ZOOKEEPER_DEPRECATED + "\n"
"""ConfigCommand's notice, on stdout once the arguments are checked."""
FORMAT_ERROR = 'Invalid entity config: all configs to be added must be in the format "key=val".'
FORMAT_WARNING = ("WARNING: The configuration message.format.version=2.7 is specified. This configuration will be "
                  "ignored if the version is newer than the inter.broker.protocol.version specified in the broker.")


@pytest.mark.parametrize(("text", "parsed"), [
    ("a=1, b = x,c=[p,q]", {"a": "1", "b": "x", "c": "p,q"}),
    ("a=", {"a": ""}),  # Kafka keeps an empty value (split with limit -1)
    ("a=1,", {"a": "1"}),  # Java's split drops trailing empty pieces
    (",", {}),
    ("c=[x=1,y]", {"c": "x=1,y"}),  # neither ',' nor '=' splits inside brackets
    ("k=[a]b[c]", {"k": "abc"}),  # every bracket goes, not just the outer pair
    (" k = v ", {"k": "v"}),
    ("a=1,a=2", {"a": "2"}),
])
def test_add_config_grammar(text: str, parsed: dict[str, str]) -> None:
    assert parse_add_config(text) == parsed


@pytest.mark.parametrize("text", ["a=b=c", "a=1,,b=2", ",a=1", "", "novalue", "a=1,b"])
def test_add_config_refusals(text: str) -> None:
    with pytest.raises(InvalidConfigsError) as refused:
        parse_add_config(text)
    assert str(refused.value) == FORMAT_ERROR



@pytest.mark.zookeeper
async def test_alter_and_describe_as_kafka_configs_prints_them(cli: Cli) -> None:  # noqa: F811
    assert (await cli(topics, "create", "t", "--partitions", "1", "--replication-factor", "1")).exit_code == 0
    assert (await cli(topics, "create", "u", "--partitions", "1", "--replication-factor", "1")).exit_code == 0

    altered = await cli(configs, "--alter", "--topic", "t", "--add-config", "message.format.version=2.7,x.y=[1,2]")
    assert (altered.exit_code, altered.output) == (1, f"{N}{FORMAT_WARNING}\nError: Unknown topic config name: x.y\n")
    altered = await cli(configs, "--alter", "--topic", "t", "--add-config", "message.format.version=2.7")
    assert (altered.exit_code, altered.output) == (
        0, f"{N}{FORMAT_WARNING}\nCompleted updating config for entity: topic 't'.\n")

    described = await cli(configs, "--describe", "--entity-type", "topics")  # no name: every topic's node
    assert (described.exit_code, described.output) == (
        0, f"{N}Configs for topic 't' are message.format.version=2.7\nConfigs for topic 'u' are \n")
    described = await cli(configs, "--describe", "--topic", "t")
    assert described.output == f"{N}Configs for topic 't' are message.format.version=2.7\n"


@pytest.mark.zookeeper
async def test_alter_failures_in_kafkas_order(cli: Cli) -> None:  # noqa: F811
    for args, message in [
        (("--delete-config", "retention.ms"), "Invalid config(s): retention.ms"),  # before the topic's existence
        (("--add-config", "retention.ms=1"), "Topic 'nope' does not exist."),
        (("--add-config", "retention.ms=1,"), "Topic 'nope' does not exist."),
        (("--add-config", ""), FORMAT_ERROR),  # given but empty: Kafka's format error, not a usage error
    ]:
        result = await cli(configs, "--alter", "--entity-type", "topics", "--entity-name", "nope", *args)
        assert (result.exit_code, result.output) == (1, f"{N}Error: {message}\n")
    assert not await cli.zk.path_exists(paths.topic_config_path("nope"))


@pytest.mark.zookeeper
@pytest.mark.parametrize(("args", "message"), [
    (("--alter", "--entity-type", "topics", "--add-config", "a=1"),
     "an entity name must be specified with --alter of topics"),
    (("--describe", "--topic", "t", "--entity-type", "topics"),  # --topic is a type too: checkArgs' first check
     "Duplicate entity type(s) specified: topics"),
    (("--describe", "--topic", "t", "--entity-name", "u"),
     "--entity-{type,name,default} should not be used in conjunction with specific entity flags"),
    (("--describe", "--entity-type", "topics", "--entity-type", "topics", "--entity-type", "topics"),
     "Duplicate entity type(s) specified: topics,topics"),
    (("--describe", "--entity-type", "brokers", "--topic", "t"),
     "Only 'users' and 'clients' entity types may be specified together"),
    (("--describe", "--entity-type", "brokers", "--entity-name", "1", "--entity-name", "2"),
     "Found multiple arguments for option entity-name, but you asked for only one"),
    (("--describe",), "At least one entity type must be specified"),
    (("--describe", "--topic", "t", "--delete-config", "a"), 'Option "[describe]" can\'t be used with option '
                                                            '"[delete-config]"'),
])
async def test_usage_errors_in_kafkas_words(cli: Cli, args: tuple[str, ...], message: str) -> None:  # noqa: F811
    result = await cli(configs, *args)
    assert result.exit_code == 1 and result.output.endswith(f"Error: {message}\n")  # printUsageAndDie: 1


RUNNING_INFO = ("Broker configuration updates using ZooKeeper are supported for bootstrapping before brokers are "
                "started to enable encrypted password configs to be stored in ZooKeeper.\n" + BrokerRunningError.hint)
"""Kafka's sentence, then ours: Kafka's names --bootstrap-server, which zkcontroller's commands do not have."""


@pytest.mark.zookeeper
async def test_broker_configs_follow_kafkas_zookeeper_rules(cli: Cli) -> None:  # noqa: F811
    """Brokers 1-3 are registered: ZooKeeper may carry unclean.leader.election.enable only for a broker that is
    down; the replication throttles may change at any time; values and static keys are checked."""
    unclean = "unclean.leader.election.enable"
    for args, message in [
        (("--entity-default", "--add-config", f"{unclean}=true"),
         f"--bootstrap-server option must be specified to update broker configs Set({unclean}). for default "
         f"cluster if any broker is running. {RUNNING_INFO}"),
        (("--entity-name", "2", "--add-config", f"{unclean}=true"),
         f"--bootstrap-server option must be specified to update broker configs Set({unclean}). when broker 2 is "
         f"running. {RUNNING_INFO}"),
        (("--entity-name", "4", "--add-config", f"{unclean}=maybe"),
         f"Invalid value maybe for configuration {unclean}: Expected value to be either true or false"),
        (("--entity-name", "4", "--add-config", "broker.id=5"),
         "Cannot update these configs dynamically: Set(broker.id)"),
        (("--entity-name", "1", "--add-config", "leader.replication.throttled.rate=x"),
         "Invalid value x for configuration leader.replication.throttled.rate: Not a number of type LONG"),
        (("--entity-name", "4", "--delete-config", unclean), f"Invalid config(s): {unclean}"),
    ]:
        result = await cli(configs, "--alter", "--entity-type", "brokers", *args)
        assert (result.exit_code, result.output) == (1, f"{N}Error: {message}\n"), args
    assert await cli.zk.get_children(paths.CONFIG_CHANGES) == []  # the refusals wrote nothing

    for args, entity in [
        (("--entity-name", "4", "--add-config", f"{unclean}=true"), "brokers '4'"),  # broker 4 is not running
        (("--entity-name", "1", "--add-config", "leader.replication.throttled.rate=100"), "brokers '1'"),
        (("--entity-name", "4", "--delete-config", unclean), "brokers '4'"),
    ]:
        result = await cli(configs, "--alter", "--entity-type", "brokers", *args)
        assert (result.exit_code, result.output) == (0, f"{N}Completed updating config for entity: {entity}.\n")
    changes = await cli.zk.get_children(paths.CONFIG_CHANGES)
    notified = [(await cli.zk.get_data_and_stat(f"{paths.CONFIG_CHANGES}/{c}"))[0] for c in changes]  # type: ignore[index]
    assert notified == [b'{"version":2,"entity_path":"brokers/4"}', b'{"version":2,"entity_path":"brokers/1"}',
                        b'{"version":2,"entity_path":"brokers/4"}']

    described = await cli(configs, "--describe", "--entity-type", "brokers")
    assert described.output == (f"{N}Configs for brokers '1' are leader.replication.throttled.rate=100\n"
                                "Configs for brokers '4' are \n")
    described = await cli(configs, "--describe", "--entity-type", "brokers", "--entity-default")
    assert described.output == f"{N}Configs for default brokers are \n"


@pytest.mark.zookeeper
@pytest.mark.parametrize(("args", "message"), [
    (("--alter", "--entity-type", "brokers", "--add-config", "a=1"),
     "an entity-name or default entity must be specified with --alter of users, clients, brokers or ips"),
    (("--describe", "--entity-type", "brokers", "--entity-name", "one"),
     "The entity name for brokers must be a valid integer broker id, but it is: one"),
    (("--describe", "--entity-type", "brokers", "--entity-default", "--entity-name", "x"),  # checked though second
     "The entity name for brokers must be a valid integer broker id, but it is: x"),
])
async def test_broker_usage_errors_in_kafkas_words(cli: Cli, args: tuple[str, ...], message: str) -> None:  # noqa: F811
    result = await cli(configs, *args)
    assert result.exit_code == 1 and result.output.endswith(f"Error: {message}\n")  # printUsageAndDie: 1


@pytest.mark.zookeeper
async def test_empty_entity_name_is_the_default_entity(cli: Cli) -> None:  # noqa: F811
    """ConfigCommand.parseEntity reads ``--entity-name ''`` as ``<default>``: for brokers it alters and describes
    the cluster default (the throttles may change while brokers run); for topics it describes "default topic"
    and, as checkArgs wants a non-empty name to alter topics, refuses to alter it."""
    throttle = "leader.replication.throttled.rate"
    altered = await cli(configs, "--alter", "--entity-type", "brokers", "--entity-name", "", "--add-config",
                        f"{throttle}=7")
    assert (altered.exit_code, altered.output) == (0, f"{N}Completed updating config for entity: default brokers.\n")
    assert await cli.zk.get_entity_configs(paths.ConfigType.BROKER, paths.DEFAULT_ENTITY) == {throttle: "7"}
    described = await cli(configs, "--describe", "--entity-type", "brokers", "--entity-name", "")
    assert (described.exit_code, described.output) == (0, f"{N}Configs for default brokers are {throttle}=7\n")

    for args in (("--entity-type", "topics", "--entity-name", ""), ("--topic", ""),
                 ("--entity-type", "topics", "--entity-default")):
        described = await cli(configs, "--describe", *args)
        assert (described.exit_code, described.output) == (0, f"{N}Configs for default topic are \n"), args
        altered = await cli(configs, "--alter", *args, "--add-config", "retention.ms=1")
        assert altered.exit_code == 1, args
        assert altered.output.endswith("Error: an entity name must be specified with --alter of topics\n"), args
    assert not await cli.zk.path_exists(paths.topic_config_path(paths.DEFAULT_ENTITY))


@pytest.mark.zookeeper
async def test_entity_name_and_default_together_the_first_is_the_entity(cli: Cli) -> None:  # noqa: F811
    """With --zookeeper, ConfigCommand takes both: ``entityNames`` keeps command-line order and parseEntity uses
    its head (the "An entity name must be specified for every entity type" check is --bootstrap-server's)."""
    throttle = "leader.replication.throttled.rate"
    for args, entity, node in [
        (("--entity-name", "1", "--entity-default"), "brokers '1'", "1"),
        (("--entity-default", "--entity-name", "1"), "default brokers", paths.DEFAULT_ENTITY),
    ]:
        altered = await cli(configs, "--alter", "--entity-type", "brokers", *args, "--add-config", f"{throttle}=5")
        assert (altered.exit_code, altered.output) == (0, f"{N}Completed updating config for entity: {entity}.\n")
        assert await cli.zk.get_entity_configs(paths.ConfigType.BROKER, node) == {throttle: "5"}
        described = await cli(configs, "--describe", "--entity-type", "brokers", *args)
        assert (described.exit_code, described.output) == (0, f"{N}Configs for {entity} are {throttle}=5\n")

    assert (await cli(topics, "create", "t", "--partitions", "1", "--replication-factor", "1")).exit_code == 0
    altered = await cli(configs, "--alter", "--entity-type", "topics", "--entity-name", "t", "--entity-default",
                        "--add-config", "retention.ms=1")
    assert (altered.exit_code, altered.output) == (0, f"{N}Completed updating config for entity: topic 't'.\n")
    altered = await cli(configs, "--alter", "--entity-type", "topics", "--entity-default", "--entity-name", "t",
                        "--add-config", "retention.ms=1")  # the default topic: its name is not a legal one
    assert altered.exit_code == 1
    assert altered.output.startswith(N + 'Error: Topic name "<default>" is illegal'), altered.output


JAVA_INT_IDS = [("1", 1), ("+1", 1), ("-1", -1), ("01", 1), ("\u0661", 1), ("\uff11", 1), ("2147483647", 2**31 - 1),
                ("-2147483648", -(2**31))]
NOT_JAVA_INTS = [" 1", "1 ", "+", "-", "1_0", "0x1", "2147483648", "-2147483649", "\U0001d7cf", "1.0", "+-1"]


@pytest.mark.parametrize(("text", "value"), [*JAVA_INT_IDS, *((t, None) for t in NOT_JAVA_INTS), ("", None)])
def test_java_parse_int(text: str, value: int | None) -> None:
    assert java_parse_int(text) == value


@pytest.mark.zookeeper
async def test_broker_entity_names_read_as_javas_to_int(cli: Cli) -> None:  # noqa: F811
    """checkArgs' ``brokerId.toInt``: what Integer.parseInt takes is a broker id (``+2``, ``02``, Arabic-Indic
    two), spaces, underscores, non-BMP digits and ids past 32 bits are refused. alterConfigWithZk checks the parsed
    id is not running and writes the parsed id's node, naming the entity as typed. Unlike Kafka, the configs it
    changes are read from that node too, so a second spelling of the same broker keeps the first one's configs."""
    for name in NOT_JAVA_INTS:
        result = await cli(configs, "--describe", "--entity-type", "brokers", "--entity-name", name)
        assert result.exit_code == 1, name
        assert result.output.endswith(
            f"Error: The entity name for brokers must be a valid integer broker id, but it is: {name}\n"), name

    unclean = "unclean.leader.election.enable"
    refused = await cli(configs, "--alter", "--entity-type", "brokers", "--entity-name", "+2", "--add-config",
                        f"{unclean}=true")
    assert (refused.exit_code, refused.output) == (
        1, f"{N}Error: --bootstrap-server option must be specified to update broker configs Set({unclean}). when "
           f"broker +2 is running. {RUNNING_INFO}\n")
    for name in ("+4", "04", "\u0664"):
        altered = await cli(configs, "--alter", "--entity-type", "brokers", "--entity-name", name, "--add-config",
                            f"{unclean}=true")
        assert (altered.exit_code, altered.output) == (
            0, f"{N}Completed updating config for entity: brokers '{name}'.\n")
        described = await cli(configs, "--describe", "--entity-type", "brokers", "--entity-name", name)
        assert (described.exit_code, described.output) == (0, f"{N}Configs for brokers '{name}' are \n")  # its own node
    assert await cli.zk.get_children(paths.config_entity_type_path(paths.ConfigType.BROKER)) == ["4"]
    assert await cli.zk.get_broker_configs("4") == {unclean: "true"}
    kept = await cli(configs, "--alter", "--entity-type", "brokers", "--entity-name", "+4", "--add-config",
                     "follower.replication.throttled.rate=10")
    assert kept.exit_code == 0, kept.output
    assert await cli.zk.get_broker_configs("4") == {unclean: "true", "follower.replication.throttled.rate": "10"}
    changes = await cli.zk.get_children(paths.CONFIG_CHANGES)
    notified = {(await cli.zk.get_data_and_stat(f"{paths.CONFIG_CHANGES}/{c}"))[0] for c in changes}  # type: ignore[index]
    assert notified == {b'{"version":2,"entity_path":"brokers/4"}'}


def test_parse_broker_outside_the_command_is_kafkas_parse_broker() -> None:
    with pytest.raises(AdminError) as refused:
        parse_broker("one")
    assert str(refused.value) == "Error parsing broker one. The broker's Entity Name must be a single integer value"


@pytest.mark.parametrize(("text", "parsed"), [
    ("a\u00a0=b", {"a\u00a0": "b"}),  # Java's \s is ASCII: the no-break space stays in the key
    ("a=\u00a0b\u2003", {"a": "\u00a0b\u2003"}),  # String.trim removes chars up to U+0020 only
    ("\x01a\x1f=\x00b\x7f", {"a": "b\x7f"}),
])
def test_add_config_trims_as_java(text: str, parsed: dict[str, str]) -> None:
    assert parse_add_config(text) == parsed


@pytest.mark.parametrize(("text", "keys"), [
    ("a,b", ["a", "b"]), (" a , b ", ["a", "b"]), ("a,,b,", ["a", "b"]),  # StringTokenizer skips empty pieces
    ("a, ,b", ["a", "", "b"]),  # a blank piece is a key "" after trim
    ("a\u00a0,\x00b", ["a\u00a0", "b"]), (None, []),
])
def test_delete_config_split_and_trimmed_as_kafka(text: str | None, keys: list[str]) -> None:
    assert parse_delete_config(text) == keys


@pytest.mark.zookeeper
async def test_a_topic_named_twice_is_the_first(cli: Cli) -> None:  # noqa: F811
    """parseEntity takes ``entityNames.head``; for topics nothing asks joptsimple for a single value."""
    assert (await cli(topics, "create", "t", "--partitions", "1", "--replication-factor", "1")).exit_code == 0
    altered = await cli(configs, "--alter", "--entity-type", "topics", "--entity-name", "t", "--entity-name", "u",
                        "--add-config", "retention.ms=1")
    assert (altered.exit_code, altered.output) == (0, f"{N}Completed updating config for entity: topic 't'.\n")
    assert await cli.zk.get_entity_configs(paths.ConfigType.TOPIC, "t") == {"retention.ms": "1"}
