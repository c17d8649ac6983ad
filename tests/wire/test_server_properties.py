"""server.properties: Kafka's keys and defaults, overrides, unknown keys logged, bad values a clear error."""

from __future__ import annotations

import logging
import re

import pytest

from zkcontroller.cluster.server_properties import ConfigError, broker_properties, parse_properties

BASE = """# a broker
broker.id=3
listeners=PLAINTEXT://127.0.0.1:9093
zookeeper.connect=zk1:2181,zk2:2181/kafka
zookeeper.session.timeout.ms : 6000
broker.rack=eu-1a
log.dirs=/data/a,\\
    /data/b
unclean.leader.election.enable=true
"""


def test_kafkas_keys_and_defaults():
    p = broker_properties(parse_properties(BASE))
    assert (p.broker_id, p.listener.host, p.listener.port, p.rack) == (3, "127.0.0.1", 9093, "eu-1a")
    assert p.advertised == p.listener
    assert p.zookeeper_connect == "zk1:2181,zk2:2181/kafka" and p.session_timeout_ms == 6000
    assert p.log_dirs == ("/data/a", "/data/b")
    assert p.controller.unclean_leader_election_enable is True
    assert p.controller.auto_leader_rebalance_enable is True and p.controller.controlled_shutdown_enable is True
    assert p.control_request_versions[4] == 5 and p.control_request_versions[6] == 7
    assert p.socket_request_max_bytes == 104857600 and p.connections_max_idle_ms == 600000
    assert broker_properties(parse_properties(BASE), ["connections.max.idle.ms=2500"]).connections_max_idle_ms == 2500


def test_overrides_win_and_ibp_picks_versions():
    p = broker_properties(parse_properties(BASE), ["inter.broker.protocol.version=2.5-IV0", "broker.id=9",
                                                   "advertised.listeners=PLAINTEXT://broker9:19093"])
    assert p.broker_id == 9 and p.advertised.host == "broker9" and p.advertised.port == 19093
    assert (p.control_request_versions[4], p.control_request_versions[5], p.control_request_versions[6]) == (4, 2, 6)


def test_unknown_keys_are_logged_and_kept(caplog):
    with caplog.at_level(logging.WARNING, "kafka.server.KafkaConfig"):
        p = broker_properties(parse_properties(BASE + "my.custom.key=3\n"))
    assert p.unknown == {"my.custom.key": "3"}
    assert "The configuration 'my.custom.key' was supplied but isn't a known config." in caplog.text


@pytest.mark.parametrize(("override", "message"), [
    ("broker.id=x", "Invalid value x for configuration broker.id: Not a number of type INT"),
    ("broker.id=-4", "broker.id must be greater than or equal to -1 and not greater than reserved.broker.max.id"),
    ("delete.topic.enable=yes", "Invalid value yes for configuration delete.topic.enable"),
    ("listeners=SSL://:9093", "only the PLAINTEXT listener is served"),
    ("listeners=PLAINTEXT://h:99999", "port 99999 is not within"),
    ("zookeeper.connect=zk1:x", 'Invalid value zk1:x for configuration zookeeper.connect: For input string: "x"'),
    ("inter.broker.protocol.version=2.3", "Invalid value 2.3 for configuration inter.broker.protocol.version"),
    ("broker.id", "Invalid value  for configuration broker.id: Not a number of type INT"),  # no '=': value ""
    ("connections.max.idle.ms=0", "Value must be at least 1"),
])
def test_bad_values_are_clear_errors(override, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        broker_properties(parse_properties(BASE), [override])


def test_zookeeper_connect_as_zookeepers_client_reads_it():
    """Kafka hands the string to ZooKeeper's client: a host without a port means 2181, and a chroot follows."""
    props = broker_properties(parse_properties(BASE), ["zookeeper.connect=zk1,zk2:2182/kafka"])
    assert props.zookeeper_connect == "zk1,zk2:2182/kafka"


def test_missing_zookeeper_connect():
    with pytest.raises(ConfigError, match=r'Missing required configuration "zookeeper\.connect"'):
        broker_properties(parse_properties("broker.id=1\n"))


def test_replica_settings_reach_the_replica_manager_config():
    """The broker process hands these to `ReplicaManager`: lag, fetch wait/back-off, IBP (which ISR path)."""
    from zkcontroller.cluster.broker_process import BrokerProcess

    p = broker_properties(parse_properties(BASE))
    r = p.replication
    assert (r.replica_lag_time_max_ms, r.replica_fetch_wait_max_ms, r.replica_fetch_backoff_ms) == (30000, 500, 1000)
    assert r.log_dirs == ("/data/a", "/data/b") and r.uses_alter_isr
    p = broker_properties(parse_properties(BASE), [
        "replica.lag.time.max.ms=4000", "replica.fetch.wait.max.ms=100", "replica.fetch.backoff.ms=0",
        "replica.socket.timeout.ms=2000", "request.timeout.ms=7000", "inter.broker.protocol.version=2.6"])
    r = p.replication
    assert (r.replica_lag_time_max_ms, r.replica_fetch_wait_max_ms, r.replica_fetch_backoff_ms) == (4000, 100, 0)
    assert (r.replica_socket_timeout_ms, r.request_timeout_ms) == (2000, 7000)
    assert not r.uses_alter_isr, "IBP 2.6 propagates ISR changes through ZooKeeper, not AlterIsr"
    assert p.unknown == {}
    assert BrokerProcess(p).broker_config().replication == r


@pytest.mark.parametrize(("overrides", "message"), [
    (["replica.fetch.wait.max.ms=900", "replica.socket.timeout.ms=800"],
     "replica.socket.timeout.ms should always be at least replica.fetch.wait.max.ms"),
    (["replica.fetch.wait.max.ms=900", "replica.lag.time.max.ms=800"],
     "replica.fetch.wait.max.ms should always be less than or equal to replica.lag.time.max.ms"),
    (["replica.lag.time.max.ms=0"], "Invalid value 0 for configuration replica.lag.time.max.ms"),
    (["replica.fetch.backoff.ms=-1"], "Invalid value -1 for configuration replica.fetch.backoff.ms"),
    (["log.dirs=/d/a,/d/a"], "Duplicate log directory found: /d/a,/d/a"),
])
def test_bad_replica_settings_are_clear_errors(overrides, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        broker_properties(parse_properties(BASE), overrides)
