"""``zkcontroller configs`` as a kafka-configs user meets it: ConfigCommand's ``--add-config`` grammar, its
``--topic`` shortcut, describing every topic, and its messages (checked against Kafka 2.8.2's ConfigCommand)."""

from __future__ import annotations

import pytest
from tests.contract.admin.test_admin_cli import Cli, cli  # noqa: F401  (the fixture, on a real ZooKeeper)

from zkcontroller.admin.cli import topics
from zkcontroller.admin.configs import InvalidConfigsError, configs, parse_add_config
from zkcontroller.zk import paths

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
    assert (altered.exit_code, altered.output) == (1, f"{FORMAT_WARNING}\nError: Unknown topic config name: x.y\n")
    altered = await cli(configs, "--alter", "--topic", "t", "--add-config", "message.format.version=2.7")
    assert (altered.exit_code, altered.output) == (
        0, f"{FORMAT_WARNING}\nCompleted updating config for entity: topic 't'.\n")

    described = await cli(configs, "--describe", "--entity-type", "topics")  # no name: every topic's node
    assert (described.exit_code, described.output) == (
        0, "Configs for topic 't' are message.format.version=2.7\nConfigs for topic 'u' are \n")
    described = await cli(configs, "--describe", "--topic", "t")
    assert described.output == "Configs for topic 't' are message.format.version=2.7\n"


@pytest.mark.zookeeper
async def test_alter_failures_in_kafkas_order(cli: Cli) -> None:  # noqa: F811
    for args, message in [
        (("--delete-config", "retention.ms"), "Invalid config(s): retention.ms"),  # before the topic's existence
        (("--add-config", "retention.ms=1"), "Topic 'nope' does not exist."),
        (("--add-config", "retention.ms=1,"), "Topic 'nope' does not exist."),
        (("--add-config", ""), FORMAT_ERROR),  # given but empty: Kafka's format error, not a usage error
    ]:
        result = await cli(configs, "--alter", "--entity-type", "topics", "--entity-name", "nope", *args)
        assert (result.exit_code, result.output) == (1, f"Error: {message}\n")
    assert not await cli.zk.path_exists(paths.topic_config_path("nope"))


@pytest.mark.zookeeper
@pytest.mark.parametrize(("args", "message"), [
    (("--alter", "--entity-type", "topics", "--add-config", "a=1"),
     "an entity name must be specified with --alter of topics"),
    (("--describe", "--topic", "t", "--entity-type", "topics"),
     "--entity-{type,name,default} should not be used in conjunction with specific entity flags"),
    (("--describe",), "At least one entity type must be specified"),
    (("--describe", "--topic", "t", "--delete-config", "a"), 'Option "[describe]" can\'t be used with option '
                                                            '"[delete-config]"'),
])
async def test_usage_errors_in_kafkas_words(cli: Cli, args: tuple[str, ...], message: str) -> None:  # noqa: F811
    result = await cli(configs, *args)
    assert result.exit_code == 2 and result.output.endswith(f"Error: {message}\n")
