"""``server.properties``: Kafka's broker configuration file, read into what one broker process needs.

Kafka's keys and defaults (2.8.2's ``KafkaConfig``) where they apply to a broker that is a controller
candidate and answers the wire protocol. Every ``KafkaConfig`` key given is parsed as its ConfigDef type (and
checked by its validator where one is modelled), even one nothing here acts on, as Kafka's ``ConfigDef.parse``
does at start-up; a key KafkaConfig does not define is logged and kept (``unknown``). A bad value is a
`ConfigError` naming the key and the value, raised before anything starts. Only PLAINTEXT listeners are
served (one listener, the inter-broker one).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zkcontroller.admin.java_numbers import java_parse_int
from zkcontroller.broker.config import MAX_RESERVED_BROKER_ID, ReplicationConfig
from zkcontroller.broker.config_helper import BROKER_CONFIG_VALIDATORS
from zkcontroller.broker.kafka_config_types import KAFKA_CONFIG_TYPES
from zkcontroller.broker.log_config import BROKER_LOG_PROPERTIES, parse_broker_log_properties
from zkcontroller.cluster.kafka_server import AutoCreateConfig
from zkcontroller.controller.config import ControllerConfig
from zkcontroller.coordination.connect_string import parse_connect_string
from zkcontroller.protocol.ibp import DEFAULT_IBP, ibp_at_least, request_versions
from zkcontroller.zk.config_values import JAVA_TRIM, parse_boolean
from zkcontroller.zk.log_config_def import TopicConfigError, parse_config_value

log = logging.getLogger("kafka.server.KafkaConfig")

MIN_IBP = "2.5-IV0"
"""Older ``inter.broker.protocol.version`` values are not offered; versions by IBP are `protocol.ibp`'s table."""


class ConfigError(ValueError):
    """A bad or missing broker setting: names the key and what was wrong."""


_PROPERTIES_WHITESPACE = " \t\f"
"""What ``java.util.Properties`` skips around keys and separators (not other whitespace, not U+00A0)."""
_ESCAPES = {"t": "\t", "r": "\r", "n": "\n", "f": "\f"}


def parse_properties(text: str, source: str = "<properties>") -> dict[str, str]:
    """``java.util.Properties.load``, which Kafka's ``Utils.loadProps`` uses for server.properties.

    Logical lines (a line ending in an odd number of backslashes continues on the next, whose leading
    whitespace is skipped; ``#``/``!`` lines and blank lines are dropped); the key ends at the first unescaped
    ``=``, ``:`` or space/tab/form feed; whitespace and one ``=``/``:`` after it are skipped; the value is the
    rest of the line, trailing whitespace included (ConfigDef trims a known config's value when parsing it);
    ``\\t``, ``\\n``, ``\\uXXXX`` and other backslash escapes are decoded in both."""
    props: dict[str, str] = {}
    for line in _logical_lines(text):
        key, value = _key_and_value(line)
        try:
            props[_unescape(key)] = _unescape(value)
        except ValueError as e:
            raise ConfigError(f"{source}: {e} in the line {line!r}") from None
    return props


def _logical_lines(text: str) -> Iterator[str]:
    """``Properties.LineReader``: natural lines (``\\n``, ``\\r`` or ``\\r\\n``) joined at continuations."""
    pending: str | None = None
    for raw in re.split(r"\r\n|\r|\n", text):
        line = raw.lstrip(_PROPERTIES_WHITESPACE)
        if pending is None:
            if not line or line[0] in "#!":  # a comment line never continues
                continue
        else:
            line = pending + line
        if (len(line) - len(line.rstrip("\\"))) % 2 == 1:
            pending = line[:-1]
            continue
        pending = None
        yield line
    if pending is not None:
        yield pending


def _key_and_value(line: str) -> tuple[str, str]:
    """``Properties.load0``'s split of a logical line, before unescaping."""
    key_end = value_start = len(line)
    has_separator = escaped = False
    for i, c in enumerate(line):
        if not escaped and c in "=:":
            key_end, value_start, has_separator = i, i + 1, True
            break
        if not escaped and c in _PROPERTIES_WHITESPACE:
            key_end, value_start = i, i + 1
            break
        escaped = c == "\\" and not escaped
    while value_start < len(line):
        c = line[value_start]
        if c not in _PROPERTIES_WHITESPACE:
            if has_separator or c not in "=:":
                break
            has_separator = True
        value_start += 1
    return line[:key_end], line[value_start:]


def _unescape(text: str) -> str:
    """``Properties.loadConvert``: ``\\uXXXX`` (a surrogate pair becomes one character), ``\\t \\r \\n \\f``,
    and a backslash before any other character stands for that character."""
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        i += 1
        if c != "\\" or i >= len(text):
            out.append(c)
            continue
        c = text[i]
        i += 1
        if c == "u":
            digits = text[i:i + 4]
            if not re.fullmatch(r"[0-9a-fA-F]{4}", digits):
                raise ValueError("Malformed \\uxxxx encoding.")
            out.append(chr(int(digits, 16)))
            i += 4
        else:
            out.append(_ESCAPES.get(c, c))
    joined = "".join(out)
    try:  # Java strings are UTF-16: an escaped surrogate pair is one character
        return joined.encode("utf-16-le", "surrogatepass").decode("utf-16-le")
    except UnicodeDecodeError:  # a lone surrogate stays as it is
        return joined


@dataclass(frozen=True)
class Listener:
    name: str
    host: str
    port: int


@dataclass(frozen=True)
class BrokerProperties:
    broker_id: int
    listener: Listener
    advertised: Listener
    zookeeper_connect: str
    session_timeout_ms: int
    rack: str | None
    log_dirs: tuple[str, ...]
    inter_broker_protocol_version: str
    controller: ControllerConfig
    socket_request_max_bytes: int
    connections_max_idle_ms: int
    replication: ReplicationConfig
    """The replica manager's settings: ``replica.*``, ``inter.broker.protocol.version``, ``log.dirs``."""
    metrics_port: int | None
    auto_create: AutoCreateConfig = field(default_factory=AutoCreateConfig)
    """``auto.create.topics.enable``, ``num.partitions``, ``default.replication.factor`` and the internal topics'
    sizes: what Metadata's topic auto-creation uses."""
    connection_setup_timeout_ms: int = 10000
    connection_setup_timeout_max_ms: int = 127000
    """``socket.connection.setup.timeout.ms`` and ``.max.ms``: the controller's connection setup bounds."""
    unknown: dict[str, str] = field(default_factory=dict)
    given: dict[str, str] = field(default_factory=dict)
    """Every property as given (overrides applied): the broker's static configs, as DescribeConfigs shows them."""

    @property
    def control_request_versions(self) -> dict[int, int]:
        """Versions this broker sends: its IBP's control requests, ControlledShutdown v3 and AlterIsr v0."""
        return request_versions(self.inter_broker_protocol_version)


def _offered_ibp(value: str) -> bool:
    try:
        return ibp_at_least(value, MIN_IBP)
    except ValueError:
        return False


_CSV_SEPARATOR = re.compile(r"\s*,\s*", re.ASCII)
r"""``CoreUtils.parseCsvList``'s separator: Java's ``\s`` is ASCII whitespace only."""


_BITS = {"SHORT": 16, "INT": 32, "LONG": 64}


def _int(key: str, value: str, minimum: int | None = None, kind: str = "INT") -> int:
    """ConfigDef's INT (or SHORT, LONG): the value ``trim``-med (every char up to U+0020), then
    ``Integer.parseInt`` (``Short.parseShort``, ``Long.parseLong``); the error shows the value as given."""
    n = java_parse_int(value.strip(JAVA_TRIM), bits=_BITS[kind])
    if n is None:
        raise ConfigError(f"Invalid value {value} for configuration {key}: Not a number of type {kind}")
    if minimum is not None and n < minimum:
        raise ConfigError(f"Invalid value {value} for configuration {key}: Value must be at least {minimum}")
    return n


def _broker_id(broker_id: int, generation_enabled: bool, max_reserved: int) -> int:
    """``KafkaConfig.validateValues``' check of ``broker.id`` (Scala's ``require``, hence the prefix); -1, which
    asks for a generated id, is refused: ids are not generated here."""
    if generation_enabled and not -1 <= broker_id <= max_reserved:
        raise ConfigError("requirement failed: broker.id must be greater than or equal to -1 and not greater than "
                          "reserved.broker.max.id")
    if not generation_enabled and broker_id < 0:
        raise ConfigError("requirement failed: broker.id must be greater than or equal to 0")
    if broker_id < 0:
        raise ConfigError("broker.id must be set (automatic broker id generation is not supported)")
    return broker_id


def _long(key: str, value: str) -> int:
    """ConfigDef's LONG (no validator): the value trimmed, then ``Long.parseLong``."""
    n = java_parse_int(value.strip(JAVA_TRIM), bits=64)
    if n is None:
        raise ConfigError(f"Invalid value {value} for configuration {key}: Not a number of type LONG")
    return n


def _bool(key: str, value: str) -> bool:
    return parse_boolean(key, value, ConfigError)


_ENDPOINT = re.compile(r"(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)", re.ASCII)
"""Kafka's ``EndPoint.uriParseExp``, matched whole: the host from ASCII letters, digits and ``-%._:`` (an IPv6
address may be bracketed), the port ASCII digits."""


def _listener(key: str, value: str) -> Listener:
    items = [v for v in _CSV_SEPARATOR.split(value.strip(JAVA_TRIM)) if v]
    if len(items) != 1:
        raise ConfigError(f"{key}={value}: exactly one listener is supported (a PLAINTEXT one)")
    m = _ENDPOINT.fullmatch(items[0])
    if m is None:
        raise ConfigError(f"{key}={value}: Unable to parse {items[0]} to a broker endpoint (NAME://host:port)")
    name, host, port = m.group(1).upper(), m.group(2), int(m.group(3))
    if name != "PLAINTEXT":
        raise ConfigError(f"{key}={value}: only the PLAINTEXT listener is served, not {name}")
    if not 0 <= port <= 65535:
        raise ConfigError(f"{key}={value}: port {port} is not within 0..65535")
    return Listener(name, host, port)


_KNOWN = {
    "broker.id", "broker.id.generation.enable", "reserved.broker.max.id", "listeners", "advertised.listeners",
    "zookeeper.connect", "zookeeper.session.timeout.ms",
    "zookeeper.connection.timeout.ms", "broker.rack", "log.dirs", "log.dir", "inter.broker.protocol.version",
    "auto.leader.rebalance.enable", "unclean.leader.election.enable", "delete.topic.enable",
    "controlled.shutdown.enable", "controlled.shutdown.max.retries", "controlled.shutdown.retry.backoff.ms",
    "replica.lag.time.max.ms", "replica.fetch.wait.max.ms", "replica.fetch.backoff.ms", "replica.socket.timeout.ms",
    "max.incremental.fetch.session.cache.slots", "min.incremental.fetch.session.eviction.ms",
    "leader.imbalance.check.interval.seconds", "leader.imbalance.per.broker.percentage",
    "zookeeper.max.in.flight.requests", "controller.socket.timeout.ms", "request.timeout.ms",
    "inter.broker.listener.name", "socket.request.max.bytes", "metrics.prometheus.port",
    "connections.max.idle.ms", "auto.create.topics.enable", "num.partitions", "default.replication.factor",
    "offsets.topic.num.partitions", "offsets.topic.replication.factor", "offsets.topic.segment.bytes",
    "transaction.state.log.num.partitions", "transaction.state.log.replication.factor",
    "transaction.state.log.min.isr", "transaction.state.log.segment.bytes",
    "socket.connection.setup.timeout.ms", "socket.connection.setup.timeout.max.ms",
    *BROKER_LOG_PROPERTIES,
}
"""The keys `broker_properties` reads (``metrics.prometheus.port`` is ours, not Kafka's)."""


def _check_kafka_configs(props: dict[str, str]) -> None:
    """``ConfigDef.parse`` over the ``KafkaConfig`` keys given: each value parsed as its type (``parseType``: a
    bad number is "Not a number of type INT", a bad boolean "Expected value to be either true or false") and
    checked by its validator where `BROKER_CONFIG_VALIDATORS` models one. Kafka refuses to start on any of them,
    used or not (``socket.send.buffer.bytes=abc``). Checked in the file's order (Kafka's is its definition order,
    which only matters when two values are bad). A CLASS value is not looked up: there is no JVM here."""
    for key, value in props.items():
        kind = KAFKA_CONFIG_TYPES.get(key)
        if kind is None:
            continue
        try:
            # Short.parseShort: the topic-config parser knows no SHORT
            parsed: object = _int(key, value, kind=kind) if kind == "SHORT" else parse_config_value(key, kind, value)
            validator = BROKER_CONFIG_VALIDATORS.get(key)
            if validator is not None:
                validator.check(key, parsed)
        except TopicConfigError as e:  # ConfigException's text, raised as ours
            raise ConfigError(str(e)) from None


def parse_overrides(overrides: Iterable[str]) -> dict[str, str]:
    """``--override`` values as kafka.Kafka reads them (``CommandLineUtils.parseKeyValueArgs``): split at the
    first ``=``, key and value kept exactly as typed (no trimming: ``" a"`` is another key than ``a``), a
    missing value read as ``""``. Only where a known config's value is parsed is it trimmed, as ConfigDef does."""
    out: dict[str, str] = {}
    for item in overrides:
        key, _, value = item.partition("=")
        out[key] = value
    return out


def broker_properties(props: dict[str, str], overrides: Iterable[str] = ()) -> BrokerProperties:
    """Validate ``props`` (with ``key=value`` ``overrides`` applied last) into `BrokerProperties`.

    As Kafka's ConfigDef, a known config's value is trimmed (``String.trim``) before it is parsed, whatever
    its type; an unknown one is kept as given. A key ``KafkaConfig`` defines is known even where nothing here
    acts on it (``num.network.threads``): its value is still checked (`_check_kafka_configs`)."""
    props = {**props, **parse_overrides(overrides)}
    unknown = {k: v for k, v in props.items() if k not in _KNOWN and k not in KAFKA_CONFIG_TYPES}
    for key in sorted(unknown):  # AbstractConfig.logUnused's line (Kafka's clients log it; its broker does not)
        log.warning("The configuration '%s' was supplied but isn't a known config.", key)

    def get(key: str, default: str | None = None) -> str:
        """The value as given: the parsers trim it, and their errors show it untrimmed, as ConfigDef's do."""
        value = props.get(key, default)
        if value is None:
            raise ConfigError(f"Missing required configuration \"{key}\" which has no default value.")
        return value

    def text(key: str, default: str | None = None) -> str:
        """A STRING config: ConfigDef's ``parseType`` returns it trimmed."""
        return get(key, default).strip(JAVA_TRIM)

    def num(key: str, default: int, minimum: int | None = None) -> int:
        """A number of the key's KafkaConfig type: ``connections.max.idle.ms`` is a LONG, the internal topics'
        replication factors SHORTs (our own keys, which Kafka lacks, INTs)."""
        return _int(key, get(key, str(default)), minimum, KAFKA_CONFIG_TYPES.get(key, "INT"))

    def flag(key: str, default: bool) -> bool:
        return _bool(key, get(key, "true" if default else "false"))

    broker_id = _broker_id(num("broker.id", -1), flag("broker.id.generation.enable", True),
                           num("reserved.broker.max.id", MAX_RESERVED_BROKER_ID, 0))
    listener = _listener("listeners", get("listeners", "PLAINTEXT://:9092"))
    advertised = _listener("advertised.listeners", props["advertised.listeners"]) \
        if "advertised.listeners" in props else listener
    if advertised.host in ("", "0.0.0.0"):
        advertised = Listener(advertised.name, "localhost", advertised.port)
    ibp = text("inter.broker.protocol.version", "2.8")
    if not _offered_ibp(ibp):
        raise ConfigError(f"Invalid value {ibp} for configuration inter.broker.protocol.version: "
                          f"supported are {MIN_IBP} to {DEFAULT_IBP}")
    zk = text("zookeeper.connect")
    try:  # Kafka passes the string to ZooKeeper's client, whose parser decides (default port 2181, chroot)
        parse_connect_string(zk)
    except ValueError as e:
        raise ConfigError(f"Invalid value {zk} for configuration zookeeper.connect: {e}") from None
    session_timeout_ms = num("zookeeper.session.timeout.ms", 18000, 1)
    dirs = text("log.dirs") if "log.dirs" in props else text("log.dir", "/tmp/kafka-logs")
    log_dirs = tuple(d for d in _CSV_SEPARATOR.split(dirs) if d)  # CoreUtils.parseCsvList
    if not log_dirs:
        raise ConfigError("log.dirs is empty")
    if len(set(log_dirs)) < len(log_dirs):
        raise ConfigError(f"Duplicate log directory found: {','.join(log_dirs)}")
    inter_broker_listener = text("inter.broker.listener.name", "PLAINTEXT")
    if inter_broker_listener.upper() != "PLAINTEXT":
        raise ConfigError(f"inter.broker.listener.name={inter_broker_listener}: only PLAINTEXT is served")
    controller = ControllerConfig(
        broker_id=broker_id,
        unclean_leader_election_enable=flag("unclean.leader.election.enable", False),
        auto_leader_rebalance_enable=flag("auto.leader.rebalance.enable", True),
        leader_imbalance_check_interval_seconds=num("leader.imbalance.check.interval.seconds", 300, 1),
        leader_imbalance_per_broker_percentage=num("leader.imbalance.per.broker.percentage", 10, 0),
        delete_topic_enable=flag("delete.topic.enable", True),
        controlled_shutdown_enable=flag("controlled.shutdown.enable", True),
        controlled_shutdown_max_retries=num("controlled.shutdown.max.retries", 3, 0),
        controlled_shutdown_retry_backoff_ms=num("controlled.shutdown.retry.backoff.ms", 5000, 0),
        zookeeper_max_in_flight_requests=num("zookeeper.max.in.flight.requests", 10, 1),
        controller_socket_timeout_ms=num("controller.socket.timeout.ms", 30000, 1),
        request_timeout_ms=num("request.timeout.ms", 30000, 1),
        inter_broker_protocol_version=ibp,
    )
    try:
        parse_broker_log_properties(props)  # the topic defaults: used once the broker runs, refused now
    except TopicConfigError as e:
        raise ConfigError(str(e)) from None
    _check_kafka_configs(props)  # after the keys read above, whose own checks speak first
    metrics = props.get("metrics.prometheus.port")
    rack = text("broker.rack", "") or None
    return BrokerProperties(
        broker_id=broker_id, listener=listener, advertised=advertised, zookeeper_connect=zk,
        session_timeout_ms=session_timeout_ms, rack=rack, log_dirs=log_dirs,
        inter_broker_protocol_version=ibp, controller=controller,
        socket_request_max_bytes=num("socket.request.max.bytes", 104857600, 1),
        connections_max_idle_ms=num("connections.max.idle.ms", 600000, 1),
        replication=_replication(num, ibp, log_dirs),
        metrics_port=_int("metrics.prometheus.port", metrics, 0) if metrics else None,
        auto_create=AutoCreateConfig(
            enable=flag("auto.create.topics.enable", True), num_partitions=num("num.partitions", 1, 1),
            default_replication_factor=num("default.replication.factor", 1),
            offsets_topic_num_partitions=num("offsets.topic.num.partitions", 50, 1),
            offsets_topic_replication_factor=num("offsets.topic.replication.factor", 3, 1),
            offsets_topic_segment_bytes=num("offsets.topic.segment.bytes", 104857600, 1),
            transaction_state_log_num_partitions=num("transaction.state.log.num.partitions", 50, 1),
            transaction_state_log_replication_factor=num("transaction.state.log.replication.factor", 3, 1),
            transaction_state_log_min_isr=num("transaction.state.log.min.isr", 2, 1),
            transaction_state_log_segment_bytes=num("transaction.state.log.segment.bytes", 104857600, 1)),
        connection_setup_timeout_ms=_long("socket.connection.setup.timeout.ms",
                                          get("socket.connection.setup.timeout.ms", "10000")),
        connection_setup_timeout_max_ms=_long("socket.connection.setup.timeout.max.ms",
                                              get("socket.connection.setup.timeout.max.ms", "127000")),
        unknown=unknown, given=dict(props),
    )


def _replication(num: Callable[[str, int, int], int], ibp: str, log_dirs: tuple[str, ...]) -> ReplicationConfig:
    """Kafka's replica settings with its defaults and its two cross-checks (KafkaConfig's ``require``s)."""
    lag = num("replica.lag.time.max.ms", 30000, 1)
    wait = num("replica.fetch.wait.max.ms", 500, 0)
    socket_timeout = num("replica.socket.timeout.ms", 30000, 1)
    if wait > socket_timeout:
        raise ConfigError("replica.socket.timeout.ms should always be at least replica.fetch.wait.max.ms to "
                          "prevent unnecessary socket timeouts")
    if wait > lag:
        raise ConfigError("replica.fetch.wait.max.ms should always be less than or equal to replica.lag.time.max.ms "
                          "to prevent frequent changes in ISR")
    return ReplicationConfig(
        replica_lag_time_max_ms=lag, replica_fetch_wait_max_ms=wait,
        replica_fetch_backoff_ms=num("replica.fetch.backoff.ms", 1000, 0), replica_socket_timeout_ms=socket_timeout,
        request_timeout_ms=num("request.timeout.ms", 30000, 1), inter_broker_protocol_version=ibp,
        max_incremental_fetch_session_cache_slots=num("max.incremental.fetch.session.cache.slots", 1000, 0),
        min_incremental_fetch_session_eviction_ms=num("min.incremental.fetch.session.eviction.ms", 120000, 0),
        log_dirs=log_dirs)


def read_latin1(path: Path) -> str:
    """``Properties.load(InputStream)`` reads the file as ISO 8859-1 (other characters come as ``\\uXXXX``)."""
    return path.read_bytes().decode("latin-1")


def load(path: Path, overrides: Iterable[str] = (), reader: Callable[[Path], str] = read_latin1) -> BrokerProperties:
    """The broker's settings from ``path`` and ``overrides``; a bad value is a `ConfigError` that names the file
    (and says overrides were given, when any were) before Kafka's text, which names the key."""
    try:
        text = reader(path)
    except OSError as e:
        raise ConfigError(f"cannot read {path}: {e.strerror or e}") from None
    overrides = tuple(overrides)
    try:
        return broker_properties(parse_properties(text, str(path)), overrides)
    except ConfigError as e:
        if str(e).startswith(f"{path}: "):  # parse_properties names the file itself
            raise
        where = f"{path} with --override" if overrides else str(path)  # not the values: one may be a password
        raise ConfigError(f"{where}: {e}") from None


def render(values: dict[str, Any]) -> str:
    """A ``server.properties`` text for ``values`` (used by the process cluster to write each broker's file),
    escaped as ``Properties.store`` would, so `parse_properties` reads back exactly the values given."""
    return "".join(f"{_escape(str(k), key=True)}={_escape(str(v))}\n" for k, v in values.items())


def _escape(text: str, key: bool = False) -> str:
    """``Properties.saveConvert``: backslashes, control characters, a leading space (any space in a key),
    ``= : # !`` and everything outside printable ASCII escaped (the file is then ASCII whatever it holds)."""
    out = []
    for i, c in enumerate(text):
        if c == "\\":
            out.append("\\\\")
        elif c == " " and (key or i == 0):
            out.append("\\ ")
        elif c in "\t\n\r\f":
            out.append("\\" + {"\t": "t", "\n": "n", "\r": "r", "\f": "f"}[c])
        elif c in "=:#!":
            out.append("\\" + c)
        elif not " " <= c <= "~":
            out.extend(f"\\u{unit:04X}" for unit in _utf16_units(c))
        else:
            out.append(c)
    return "".join(out)


def _utf16_units(c: str) -> list[int]:
    data = c.encode("utf-16-le", "surrogatepass")
    return [int.from_bytes(data[j:j + 2], "little") for j in range(0, len(data), 2)]
