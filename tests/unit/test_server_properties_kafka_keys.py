"""Every ``KafkaConfig`` key in server.properties is a known config and its value is checked at start-up, as
Kafka 2.8.2's ``ConfigDef.parse`` does, even where nothing here acts on it: ``num.network.threads`` was logged
as "isn't a known config", and ``socket.send.buffer.bytes=abc`` (which stops Kafka) was accepted."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from click.testing import CliRunner

from zkcontroller.cli import main
from zkcontroller.cluster.server_properties import ConfigError, broker_properties, load, parse_properties

BASE = "broker.id=1\nzookeeper.connect=zk1:2181\n"


@pytest.mark.parametrize(("line", "message"), [
    ("socket.send.buffer.bytes=abc", "Invalid value abc for configuration socket.send.buffer.bytes: "
                                     "Not a number of type INT"),
    ("zookeeper.connection.timeout.ms=10s", "Invalid value 10s for configuration zookeeper.connection.timeout.ms: "
                                            "Not a number of type INT"),
    ("metrics.sample.window.ms=1.5", "Invalid value 1.5 for configuration metrics.sample.window.ms: "
                                     "Not a number of type LONG"),
    ("offsets.commit.required.acks=40000", "Invalid value 40000 for configuration offsets.commit.required.acks: "
                                           "Not a number of type SHORT"),
    ("log.cleaner.io.buffer.load.factor=half", "Invalid value half for configuration "
                                               "log.cleaner.io.buffer.load.factor: Not a number of type DOUBLE"),
    ("zookeeper.set.acl=yes", "Invalid value yes for configuration zookeeper.set.acl: "
                              "Expected value to be either true or false"),
    ("num.network.threads=0", "Invalid value 0 for configuration num.network.threads: Value must be at least 1"),
    ("ssl.client.auth=maybe", "Invalid value maybe for configuration ssl.client.auth: "
                              "String must be one of: required, requested, none"),
])
def test_a_kafka_config_value_of_the_wrong_type_refuses_to_start(line: str, message: str) -> None:
    with pytest.raises(ConfigError) as refused:
        broker_properties(parse_properties(BASE + line + "\n"))
    assert str(refused.value) == message


def test_kafka_configs_nothing_here_reads_are_known_and_parsed_as_kafka_parses_them(
        caplog: pytest.LogCaptureFixture) -> None:
    """Trimmed, Java's number grammar, any case of true/false; a key KafkaConfig lacks is still logged."""
    given = ("num.network.threads= 3 \nsocket.send.buffer.bytes=-1\nlog.flush.interval.ms=9223372036854775807\n"
             "zookeeper.set.acl=TRUE\nlog.cleaner.io.buffer.load.factor=0.9d\nssl.client.auth=none\n"
             "authorizer.class.name=\nprincipal.builder.class=com.example.Builder\nmy.custom.key=1\n")
    with caplog.at_level(logging.WARNING, "kafka.server.KafkaConfig"):
        props = broker_properties(parse_properties(BASE + given))
    assert props.unknown == {"my.custom.key": "1"}
    assert "isn't a known config" in caplog.text  # for my.custom.key only
    assert [r.getMessage() for r in caplog.records] == [
        "The configuration 'my.custom.key' was supplied but isn't a known config."]
    assert props.given["socket.send.buffer.bytes"] == "-1"


def test_an_override_is_checked_too() -> None:
    with pytest.raises(ConfigError) as refused:
        broker_properties(parse_properties(BASE), ["background.threads=x"])
    assert str(refused.value) == "Invalid value x for configuration background.threads: Not a number of type INT"


def test_load_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "server.properties"
    path.write_text(BASE + "socket.receive.buffer.bytes=big\n")
    with pytest.raises(ConfigError) as refused:
        load(path)
    assert str(refused.value) == (f"{path}: Invalid value big for configuration socket.receive.buffer.bytes: "
                                  f"Not a number of type INT")
    path.write_text(BASE)
    with pytest.raises(ConfigError) as refused:
        load(path, ["num.io.threads=0"])
    assert str(refused.value) == (f"{path} with --override: Invalid value 0 for configuration num.io.threads: "
                                  f"Value must be at least 1")


@pytest.mark.usefixtures("restored_logging")  # the command sets up the broker's logging on the root
def test_the_broker_command_exits_1_with_one_line(tmp_path: Path) -> None:
    """Before it starts anything (nothing listens on ZooKeeper's port 1: it is never tried)."""
    path = tmp_path / "server.properties"
    path.write_text("broker.id=1\nzookeeper.connect=127.0.0.1:1\nsocket.send.buffer.bytes=abc\n")
    result = CliRunner().invoke(main, ["broker", str(path)], catch_exceptions=False)
    assert (result.exit_code, result.stderr) == (
        1, f"Error: {path}: Invalid value abc for configuration socket.send.buffer.bytes: Not a number of type INT\n")


def test_the_keys_read_here_have_kafkas_types() -> None:
    """``connections.max.idle.ms`` and ``replica.lag.time.max.ms`` are LONGs (they were read as INTs and refused
    past 2^31-1, which Kafka takes); the internal topics' replication factors are SHORTs."""
    props = broker_properties(parse_properties(BASE), ["connections.max.idle.ms=3000000000",
                                                       "replica.lag.time.max.ms=4000000000"])
    assert (props.connections_max_idle_ms, props.replication.replica_lag_time_max_ms) == (3000000000, 4000000000)
    for value in ("x", "40000"):
        with pytest.raises(ConfigError) as refused:
            broker_properties(parse_properties(BASE), [f"offsets.topic.replication.factor={value}"])
        assert str(refused.value) == (f"Invalid value {value} for configuration offsets.topic.replication.factor: "
                                      f"Not a number of type SHORT")
