"""The lines a broker's config manager writes for the notifications Kafka 2.8.2's ``DynamicConfigManager`` handles
apart: a broker entity that is no broker id (``BrokerConfigHandler``'s ``brokerId.trim.toInt`` throws), a version 1
notification (``processEntityConfigChangeVersion1``'s own line, and its refusal of types other than ``topics`` and
``clients``). A failure is logged by ``ZkNodeChangeNotificationListener.processNotification`` with the znode's bytes
as ``new String(data, UTF_8)`` reads them, and the pass goes on with the next notification."""

from __future__ import annotations

import logging
import traceback

import pytest
from tests.helpers import ManualClock, wait_until

from zkcontroller.broker.topic_config_manager import TopicConfigManager
from zkcontroller.coordination.api import CreateMode
from zkcontroller.runtime.runtime import AsyncioRuntime
from zkcontroller.zk import paths
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

LISTENER = "kafka.common.ZkNodeChangeNotificationListener"
DYNAMIC = "kafka.server.DynamicConfigManager"


async def _notify(zk: KafkaZkClient, data: bytes) -> str:
    """A notification holding ``data`` as it is (a writer other than ours)."""
    return await zk.session.create(f"{paths.CONFIG_CHANGES}/{paths.CONFIG_CHANGE_PREFIX}", data,
                                   CreateMode.PERSISTENT_SEQUENTIAL)


async def _first_pass(zk: KafkaZkClient, clock: ManualClock, caplog: pytest.LogCaptureFixture,
                      last_line: str) -> list[logging.LogRecord]:
    """Broker 1's config manager started on the notifications there; its Kafka lines until ``last_line``."""
    manager = TopicConfigManager(1, lambda: zk, AsyncioRuntime(clock=clock))
    with caplog.at_level(logging.DEBUG, LISTENER), caplog.at_level(logging.DEBUG, DYNAMIC):
        await manager.startup()
        await wait_until(lambda: last_line in caplog.text, timeout_s=5, what=last_line)
    manager.shutdown()
    return [r for r in caplog.records if r.name in (LISTENER, DYNAMIC)]


async def test_a_broker_entity_that_is_no_id_is_logged_as_kafka_fails_on_it_and_the_pass_goes_on(
        store: tuple[KafkaZkClient, ManualClock], caplog: pytest.LogCaptureFixture) -> None:
    """It was read, logged and skipped without a word; Kafka's handler throws ``NumberFormatException`` after the
    override line, and the listener logs the notification as stored: here with spaces our re-encoding dropped and
    trailing bytes Jackson never reads, which are not UTF-8 (an encoded surrogate: one U+FFFD in Java, three in
    Python's decoder)."""
    zk, clock = store
    stored = b'{"version": 2, "entity_path": "brokers/ abc"}\xed\xa0\x80'
    bad = await _notify(zk, stored)
    await zk.set_or_create_entity_configs(paths.ConfigType.TOPIC, "t", {"retention.ms": "5"})
    await zk.create_config_change_notification("topics/t")
    topic_line = "Processing override for entityPath: topics/t with config: HashMap(retention.ms -> 5)"
    records = await _first_pass(zk, clock, caplog, topic_line)

    lines = [(r.name, r.levelname, r.getMessage()) for r in records]
    assert lines[:4] == [
        (LISTENER, "INFO", "Processing notification(s) to /config/changes"),
        (DYNAMIC, "INFO", "Processing override for entityPath: brokers/ abc with config: HashMap()"),
        (LISTENER, "ERROR", 'error processing change notification {"version": 2, "entity_path": "brokers/ abc"}'
                            f"\ufffd from {bad}"),
        (DYNAMIC, "INFO", topic_line),
    ]
    exc_info = records[2].exc_info
    assert exc_info is not None and exc_info[1] is not None
    assert traceback.format_exception_only(exc_info[1]) == [
        'java.lang.NumberFormatException: For input string: "abc"\n']


async def test_a_version_1_notification_has_kafka_s_own_line_and_only_topics_and_clients(
        store: tuple[KafkaZkClient, ManualClock], caplog: pytest.LogCaptureFixture) -> None:
    """Version 1 (Kafka before 0.10.1 wrote it) was logged with version 2's line; Kafka logs the type and the
    entity apart and prints the ``java.util.Properties`` (order and ``{k=v}`` form checked against JDK 17), and
    refuses a version 1 notification of any type but ``topics`` and ``clients``."""
    zk, clock = store
    await zk.set_or_create_entity_configs(paths.ConfigType.TOPIC, "t", {
        "retention.ms": "5", "segment.ms": "7", "cleanup.policy": "compact"})
    await zk.set_or_create_entity_configs(paths.ConfigType.CLIENT, "c", {"producer_byte_rate": "1024"})
    await _notify(zk, b'{"version":1,"entity_type":"topics","entity_name":"t"}')
    await _notify(zk, b'{"version":1,"entity_type":"clients","entity_name":"c"}')
    broker = b'{"version":1,"entity_type":"brokers","entity_name":"1"}'
    bad = await _notify(zk, broker)
    await _notify(zk, b'{"version":1,"entity_type":"topics","entity_name":"none"}')
    last = "Processing override for entityType: topics, entity: none with config: {}"
    records = await _first_pass(zk, clock, caplog, last)

    lines = [(r.name, r.levelname, r.getMessage()) for r in records]
    assert lines[1:5] == [
        (DYNAMIC, "INFO", "Processing override for entityType: topics, entity: t with config: "
                          "{cleanup.policy=compact, retention.ms=5, segment.ms=7}"),
        (DYNAMIC, "INFO", "Processing override for entityType: clients, entity: c with config: "
                          "{producer_byte_rate=1024}"),
        (LISTENER, "ERROR", f"error processing change notification {broker.decode()} from {bad}"),
        (DYNAMIC, "INFO", last),
    ]
    exc_info = records[3].exc_info
    assert exc_info is not None and exc_info[1] is not None
    assert traceback.format_exception_only(exc_info[1]) == [
        "java.lang.IllegalArgumentException: Version 1 config change notification must have 'entity_type' set to "
        f"'clients' or 'topics'. Received: {broker.decode()}\n"]


def _thrown(record: logging.LogRecord) -> str:
    """The exception a failure line carries, as Java's ``toString`` prints it in the stack trace."""
    assert record.exc_info is not None and record.exc_info[1] is not None
    return "".join(traceback.format_exception_only(record.exc_info[1])).rstrip("\n")


def _failures(records: list[logging.LogRecord]) -> list[tuple[str, str]]:
    """Each listener failure line: its message and the exception it carries."""
    return [(r.getMessage(), _thrown(r)) for r in records if r.name == LISTENER and r.levelname == "ERROR"]


async def test_notifications_kafka_cannot_decode_are_logged_with_the_exception_kafka_throws(
        store: tuple[KafkaZkClient, ManualClock], caplog: pytest.LogCaptureFixture) -> None:
    """They were reported by a line of ours ("Ignoring malformed config change notification") where Kafka's
    ``processNotification`` throws (an ``IllegalArgumentException`` of ``DynamicConfigManager``, a Jackson
    ``JsonMappingException`` of ``DecodeJson``) and its listener logs the notification as stored, with the
    exception. Empty data is JSON to Jackson (``MissingNode``): no object."""
    zk, clock = store
    received = "Received: "
    bad: list[tuple[bytes, str]] = [
        (b'{"version":3,"entity_path":"topics/t"}', "java.lang.IllegalArgumentException: Config change notification "
         "has unsupported version '3', supported versions are 1 and 2."),
        (b'{"version":1,"entity_type":null,"entity_name":"t"}', "java.lang.IllegalArgumentException: Version 1 "
         "config change notification must have 'entity_type' set to 'clients' or 'topics'. " + received),
        (b'{"version":1,"entity_type":"topics"}', "java.lang.IllegalArgumentException: Version 1 config change "
         "notification does not specify 'entity_name'. " + received),
        (b'{"version":2,"entity_name":"topics/t"}', "java.lang.IllegalArgumentException: Version 2 config change "
         "notification must specify 'entity_path'. " + received),
        (b"", "java.lang.IllegalArgumentException: Config change notification has an unexpected value. The format "
         'is:{"version" : 1, "entity_type":"topics/clients", "entity_name" : "topic_name/client_id"} or {"version" : '
         '2, "entity_path":"entity_type/entity_name"}. ' + received),
        (b'{"entity_path":"topics/t"}', "com.fasterxml.jackson.databind.JsonMappingException: No such field exists: "
         "`version`"),
        (b'{"version":"2","entity_path":"topics/t"}', "com.fasterxml.jackson.databind.JsonMappingException: "
         'Expected `Int` value, received "2"'),
        (b'{"version":2.0,"entity_path":"topics/t"}', "com.fasterxml.jackson.databind.JsonMappingException: "
         "Expected `Int` value, received 2.0"),
        (b'{"version":2,"entity_path":["topics/t"]}', "com.fasterxml.jackson.databind.JsonMappingException: "
         'Expected `String` value, received ["topics/t"]'),
    ]
    created = [await _notify(zk, data) for data, _ in bad]
    await zk.create_config_change_notification("topics/t")
    last = "Processing override for entityPath: topics/t with config: HashMap()"
    records = await _first_pass(zk, clock, caplog, last)

    expected = [(f"error processing change notification {data.decode()} from {path}",
                 thrown + data.decode() if thrown.endswith(received) else thrown)
                for (data, thrown), path in zip(bad, created, strict=True)]
    assert _failures(records) == expected
    assert [r.getMessage() for r in records if r.name == DYNAMIC] == [last]  # the pass went on
    assert "Ignoring malformed" not in caplog.text


async def test_a_version_2_path_of_no_known_type_or_without_a_slash_throws_as_in_kafka(
        store: tuple[KafkaZkClient, ManualClock], caplog: pytest.LogCaptureFixture) -> None:
    """Skipped without a word; Kafka lists the types it has handlers for (a Scala immutable ``HashMap``'s keys,
    in its order), and, for a path without ``/``, fails on ``substring(0, -1)`` before its own check."""
    zk, clock = store
    unknown = b'{"version":2,"entity_path":"groups/g"}'
    no_slash = b'{"version":2,"entity_path":"topics\xc3\xa9"}'
    paths_ = [await _notify(zk, unknown), await _notify(zk, no_slash)]
    await zk.create_config_change_notification("topics/t")
    records = await _first_pass(zk, clock, caplog, "entityPath: topics/t")

    assert _failures(records) == [
        (f"error processing change notification {unknown.decode()} from {paths_[0]}",
         "java.lang.IllegalArgumentException: Version 2 config change notification must have 'entity_path' starting "
         f"with one of 'topics'/, 'clients'/, 'users'/, 'ips'/, 'brokers'/. Received: {unknown.decode()}"),
        (f"error processing change notification {no_slash.decode()} from {paths_[1]}",
         "java.lang.StringIndexOutOfBoundsException: begin 0, end -1, length 7"),
    ]


async def test_a_version_1_type_is_one_of_kafka_s_names_exactly(
        store: tuple[KafkaZkClient, ManualClock], caplog: pytest.LogCaptureFixture) -> None:
    """``entity_type: "topics/x"`` passed as a topic entity (``topics/x/t``: its prefix was checked); Kafka's
    ``validConfigTypes`` holds exact names."""
    zk, clock = store
    await zk.set_or_create_entity_configs(paths.ConfigType.TOPIC, "t", {"retention.ms": "5"})
    nested = b'{"version":1,"entity_type":"topics/x","entity_name":"t"}'
    bad = await _notify(zk, nested)
    await _notify(zk, b'{"version":1,"entity_type":"topics","entity_name":"t"}')
    records = await _first_pass(zk, clock, caplog, "entityType: topics, entity: t")

    assert _failures(records) == [(
        f"error processing change notification {nested.decode()} from {bad}",
        "java.lang.IllegalArgumentException: Version 1 config change notification must have 'entity_type' set to "
        f"'clients' or 'topics'. Received: {nested.decode()}")]
    assert [r.getMessage() for r in records if r.name == DYNAMIC] == [
        "Processing override for entityType: topics, entity: t with config: {retention.ms=5}"]


async def test_data_that_is_not_json_is_skipped_as_kafka_does_with_a_warning_of_ours(
        store: tuple[KafkaZkClient, ManualClock], caplog: pytest.LogCaptureFixture) -> None:
    """Kafka's handler ignores it (``Json.parseBytes`` is None: the old ``TopicConfigManager`` wrote such nodes);
    no Kafka line claims a failure, ours says what was skipped."""
    zk, clock = store
    skipped = await _notify(zk, b"topic: t")
    await zk.create_config_change_notification("topics/t")
    with caplog.at_level(logging.WARNING, "zkcontroller.broker.TopicConfigManager"):
        records = await _first_pass(zk, clock, caplog, "entityPath: topics/t")
    assert _failures(records) == []
    assert [r.getMessage() for r in caplog.records if r.name == "zkcontroller.broker.TopicConfigManager"] == [
        f"[TopicConfigManager broker=1] Skipping the config change notification {skipped}, which is not JSON (as "
        "Kafka does, silently): invalid JSON (Expecting value: line 1 column 1 (char 0))"]


CONNECTION_QUOTAS = "kafka.network.ConnectionQuotas"


async def test_ip_quotas_are_processed_as_kafka_s_ip_config_handler_does(
        store: tuple[KafkaZkClient, ManualClock], caplog: pytest.LogCaptureFixture) -> None:
    """``ips/...`` (Kafka 2.8.2's ``ConfigType.Ip``, handled by ``IpConfigHandler``) was skipped without a word:
    the override line, then ``ConnectionQuotas``' line for the rate set or removed (an address as
    ``InetAddress.toString``), the default's line; a rate that is no int and an address that is no IP fail as
    Kafka's handler does. The ones there at start-up are read too (``DynamicConfigManager.startup``)."""
    zk, clock = store
    rate = "connection_creation_rate"
    await zk.set_or_create_entity_configs(paths.ConfigType.IP, "10.0.0.9", {rate: "3"})
    manager = TopicConfigManager(1, lambda: zk, AsyncioRuntime(clock=clock))
    last = "Removing max connection rate override for /9.9.9.9"
    with caplog.at_level(logging.DEBUG, LISTENER), caplog.at_level(logging.DEBUG, DYNAMIC), \
            caplog.at_level(logging.INFO, CONNECTION_QUOTAS):
        await manager.startup()  # the nodes there are read: 10.0.0.9
        assert manager.ip_quotas.per_ip["/10.0.0.9"] == 3
        caplog.clear()
        await zk.set_or_create_entity_configs(paths.ConfigType.IP, "1.2.3.4", {rate: "10"})
        await zk.set_or_create_entity_configs(paths.ConfigType.IP, "::1", {rate: "7"})
        await zk.set_or_create_entity_configs(paths.ConfigType.IP, "<default>", {rate: "20"})
        await zk.set_or_create_entity_configs(paths.ConfigType.IP, "5.6.7.8", {rate: "x"})
        await zk.set_or_create_entity_configs(paths.ConfigType.IP, "somehost", {rate: "1"})
        for entity in ("1.2.3.4", "::1", "<default>", "5.6.7.8", "somehost", "9.9.9.9"):
            await zk.create_config_change_notification(f"ips/{entity}")
        await wait_until(lambda: last in caplog.text, timeout_s=5, what=last)
    manager.shutdown()

    notified = [r for r in caplog.records if r.name in (DYNAMIC, CONNECTION_QUOTAS) or
                (r.name == LISTENER and r.levelname == "ERROR")]
    lines = [(r.name, r.getMessage()) for r in notified]
    changes = sorted(await zk.get_children(paths.CONFIG_CHANGES))
    assert lines == [
        (DYNAMIC, f"Processing override for entityPath: ips/1.2.3.4 with config: HashMap({rate} -> 10)"),
        (CONNECTION_QUOTAS, "Updating max connection rate override for /1.2.3.4 to 10"),
        (DYNAMIC, f"Processing override for entityPath: ips/::1 with config: HashMap({rate} -> 7)"),
        (CONNECTION_QUOTAS, "Updating max connection rate override for /0:0:0:0:0:0:0:1 to 7"),
        (DYNAMIC, f"Processing override for entityPath: ips/<default> with config: HashMap({rate} -> 20)"),
        (CONNECTION_QUOTAS, "Updated default max IP connection rate to 20"),
        (DYNAMIC, f"Processing override for entityPath: ips/5.6.7.8 with config: HashMap({rate} -> x)"),
        (LISTENER, 'error processing change notification {"version":2,"entity_path":"ips/5.6.7.8"} from '
                   f"{paths.CONFIG_CHANGES}/{changes[3]}"),
        (DYNAMIC, f"Processing override for entityPath: ips/somehost with config: HashMap({rate} -> 1)"),
        (LISTENER, 'error processing change notification {"version":2,"entity_path":"ips/somehost"} from '
                   f"{paths.CONFIG_CHANGES}/{changes[4]}"),
        (DYNAMIC, "Processing override for entityPath: ips/9.9.9.9 with config: HashMap()"),
        (CONNECTION_QUOTAS, last),
    ]
    assert [_thrown(r) for r in notified if r.levelname == "ERROR"] == [
        'java.lang.NumberFormatException: For input string: "x"',
        "java.lang.IllegalArgumentException: Unable to resolve address somehost"]
    assert manager.ip_quotas.per_ip["/1.2.3.4"] == 10
    assert "/9.9.9.9" not in manager.ip_quotas.per_ip and manager.ip_quotas.default_rate == 20


async def test_a_client_quota_kafka_s_handler_fails_on_gets_kafka_s_failure_line(
        store: tuple[KafkaZkClient, ManualClock], caplog: pytest.LogCaptureFixture) -> None:
    """A rate that is no number (``toLong``/``toDouble``, the fetch quota's ``consumer_byte_rate`` included, which
    our brokers do not keep), a user path of neither one nor three parts, an empty entity name (a path ZooKeeper's
    client refuses) were logged by a line of ours; Kafka's handler throws, and its listener logs the failure."""
    zk, clock = store
    await zk.set_or_create_entity_configs(paths.ConfigType.CLIENT, "c", {"consumer_byte_rate": "lots"})
    await zk.set_or_create_entity_configs(paths.ConfigType.CLIENT, "d", {"request_percentage": " "})
    await zk.set_or_create_entity_configs(paths.ConfigType.USER, "u/clients", {})
    for entity in ("clients/c", "clients/d", "users/u/clients", "clients/"):
        await zk.create_config_change_notification(entity)
    await zk.create_config_change_notification("topics/t")
    records = await _first_pass(zk, clock, caplog, "entityPath: topics/t")

    assert [thrown for _, thrown in _failures(records)] == [
        'java.lang.NumberFormatException: For input string: "lots"',
        "java.lang.NumberFormatException: empty String",
        "java.lang.IllegalArgumentException: Invalid quota entity path: u/clients",
        "java.lang.IllegalArgumentException: Path must not end with / character"]
    # (the start-up read of every quota node reports c, d and u/clients by a line of ours: Kafka's start fails)


async def test_a_config_node_kafka_s_decode_throws_on_gets_kafka_s_failure_line_whatever_its_type(
        store: tuple[KafkaZkClient, ManualClock], caplog: pytest.LogCaptureFixture) -> None:
    """A value that is no string in ``/config/<type>/<name>`` (``ConfigEntityZNode.decode``'s ``v.to[String]``
    throws in ``fetchEntityConfig``, before the override line): the listener's failure line with Jackson's
    exception, for this broker's level, another broker's, a client quota, an IP quota and a topic alike (after a
    line of ours that names the node)."""
    zk, clock = store
    entities = ["brokers/<default>", "brokers/7", "clients/c", "ips/1.2.3.4", "topics/t"]
    for entity in entities:
        await zk.session.ensure_path(f"{paths.CONFIG}/{entity}")
        await zk.session.set_data(f"{paths.CONFIG}/{entity}", b'{"version":1,"config":{"a":"1","b":[2.5]}}', -1)
        await zk.create_config_change_notification(entity)
    await zk.create_config_change_notification("topics/ok")
    records = await _first_pass(zk, clock, caplog, "entityPath: topics/ok")

    assert _failures(records) == [
        (f'error processing change notification {{"version":2,"entity_path":"{entity}"}} from '
         f"{paths.CONFIG_CHANGES}/{paths.CONFIG_CHANGE_PREFIX}{i:010d}",
         "com.fasterxml.jackson.databind.JsonMappingException: Expected `String` value, received [2.5]")
        for i, entity in enumerate(entities)]
    assert [r.getMessage() for r in records if r.name == DYNAMIC] == [
        "Processing override for entityPath: topics/ok with config: HashMap()"]
    assert [r.getMessage() for r in caplog.records if "Ignoring the malformed config" in r.getMessage()] == [
        f"[TopicConfigManager broker=1] Ignoring the malformed config {paths.CONFIG}/{entity}: config.b: expected a "
        "string, got array" for entity in entities]  # ours (not the start-up reads'): Kafka's does not name the node


async def test_a_notification_python_cannot_print_or_nest_gets_kafka_s_line_and_the_later_ones_are_processed(
        store: tuple[KafkaZkClient, ManualClock], caplog: pytest.LogCaptureFixture) -> None:
    """A 5000-digit version (``str(int)``'s digit limit) or one nested 600 deep (``jackson_text`` recursed) raised
    out of the read of ``/config/changes``: the pass died before any notification, and every later pass met the
    same one, so no config change was ever applied again. Kafka's listener logs each and goes on."""
    zk, clock = store
    huge = b"9" * 5000
    deep = b"[" * 600 + b"]" * 600
    created = [await _notify(zk, b'{"version":' + huge + b"}"), await _notify(zk, b'{"version":' + deep + b"}")]
    await zk.set_or_create_entity_configs(paths.ConfigType.TOPIC, "t", {"retention.ms": "5"})
    await zk.create_config_change_notification("topics/t")
    line = "Processing override for entityPath: topics/t with config: HashMap(retention.ms -> 5)"
    manager = TopicConfigManager(1, lambda: zk, AsyncioRuntime(clock=clock))
    with caplog.at_level(logging.DEBUG, LISTENER), caplog.at_level(logging.DEBUG, DYNAMIC):
        await manager.startup()
        try:
            await wait_until(lambda: line in caplog.text, timeout_s=5, what=line)
            await zk.set_or_create_entity_configs(paths.ConfigType.TOPIC, "t", {"retention.ms": "6"})
            await zk.create_config_change_notification("topics/t")  # a later pass too
            await wait_until(lambda: "HashMap(retention.ms -> 6)" in caplog.text, timeout_s=5, what="the next pass")
        finally:
            manager.shutdown()
    records = [r for r in caplog.records if r.name in (LISTENER, DYNAMIC)]
    assert _failures(records) == [
        (f'error processing change notification {{"version":{huge.decode()}}} from {created[0]}',
         f"com.fasterxml.jackson.databind.JsonMappingException: Expected `Int` value, received {huge.decode()}"),
        (f'error processing change notification {{"version":{deep.decode()}}} from {created[1]}',
         f"com.fasterxml.jackson.databind.JsonMappingException: Expected `Int` value, received {deep.decode()}")]


async def test_a_pass_that_fails_unexpectedly_is_logged_and_the_next_change_is_read(
        store: tuple[KafkaZkClient, ManualClock], caplog: pytest.LogCaptureFixture,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a ZooKeeper error was caught around a pass: anything else ended the listener's task without a line,
    and no change was read again. Kafka's ``processNotifications`` catches every ``Exception`` and logs it."""
    import zkcontroller.broker.topic_config_manager as module
    zk, clock = store
    purge = module.purge_obsolete_config_changes
    failures = [RuntimeError("boom")]

    async def failing_once(*args: object, **kwargs: object) -> list[str]:
        if failures:
            raise failures.pop()
        return await purge(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(module, "purge_obsolete_config_changes", failing_once)
    await zk.create_config_change_notification("topics/t")
    manager = TopicConfigManager(1, lambda: zk, AsyncioRuntime(clock=clock))
    with caplog.at_level(logging.DEBUG, LISTENER), caplog.at_level(logging.DEBUG, DYNAMIC):
        await manager.startup()
        try:
            await wait_until(lambda: "Error while processing" in caplog.text, timeout_s=5, what="the failed pass")
            await zk.create_config_change_notification("topics/u")
            await wait_until(lambda: "entityPath: topics/u" in caplog.text, timeout_s=5, what="the next pass")
        finally:
            manager.shutdown()
    errors = [r for r in caplog.records if r.name == LISTENER and r.levelname == "ERROR"]
    assert [(r.getMessage(), _thrown(r)) for r in errors] == [
        ("Error while processing notification change for path = /config/changes", "RuntimeError: boom")]
    assert caplog.text.count("entityPath: topics/t") == 1  # processed before the purge failed: not again


async def test_a_client_id_with_a_broken_escape_gets_kafka_s_failure_line(
        store: tuple[KafkaZkClient, ManualClock], caplog: pytest.LogCaptureFixture) -> None:
    """``QuotaConfigHandler`` desanitizes the name (``URLDecoder.decode``), which throws; it was a ValueError
    logged by a line of ours."""
    zk, clock = store
    for entity in ("clients/%zz", "users/u/clients/a%4", "users/%-1/clients/%-1", "users/%-1"):
        await zk.create_config_change_notification(entity)
    await zk.create_config_change_notification("topics/t")
    records = await _first_pass(zk, clock, caplog, "entityPath: topics/t")
    prefix = "java.lang.IllegalArgumentException: URLDecoder: "
    assert [thrown for _, thrown in _failures(records)] == [
        prefix + 'Illegal hex characters in escape (%) pattern - Error at index 0 in: "zz"',
        prefix + "Incomplete trailing escape (%) pattern",
        prefix + "Illegal hex characters in escape (%) pattern - negative value"]  # a user name stays sanitized
    assert "Ignoring the client quota config" not in caplog.text


async def test_an_ip_with_a_zone_past_an_int_is_refused_as_java_does_and_start_up_reads_the_others(
        store: tuple[KafkaZkClient, ManualClock], caplog: pytest.LogCaptureFixture) -> None:
    """``int(zone)`` of 5000 digits raised ValueError, which the start-up read of every IP did not catch: the
    config manager's start-up raised and the IPs after it were not read. Java's ``checkNumericZone`` takes a zone
    past ``Integer.MAX_VALUE`` as an interface name, which does not resolve."""
    zk, clock = store
    long_zone = "::1%" + "1" * 5000
    for ip, rate in ((long_zone, "5"), ("::1%2147483648", "6"), ("::1%00002147483647", "7"), ("1.2.3.4", "8")):
        await zk.set_or_create_entity_configs(paths.ConfigType.IP, ip, {"connection_creation_rate": rate})
    await zk.create_config_change_notification(f"ips/{long_zone}")
    await zk.create_config_change_notification("topics/t")
    manager = TopicConfigManager(1, lambda: zk, AsyncioRuntime(clock=clock))
    with caplog.at_level(logging.DEBUG):
        await manager.startup()
        try:
            await wait_until(lambda: "entityPath: topics/t" in caplog.text, timeout_s=5, what="the pass")
        finally:
            manager.shutdown()
    assert manager.ip_quotas.per_ip == {"/0:0:0:0:0:0:0:1%2147483647": 7, "/1.2.3.4": 8}
    ours = [r.getMessage() for r in caplog.records if "Ignoring the IP quota config" in r.getMessage()]
    assert [m.rsplit(": ", 1)[1][:40] for m in ours] == ["Unable to resolve address ::1%1111111111111"[:40],
                                                         "Unable to resolve address ::1%2147483648"]
    assert [thrown[:70] for _, thrown in _failures(caplog.records)] == [
        f"java.lang.IllegalArgumentException: Unable to resolve address {long_zone}"[:70]]
