"""Kafka 2.8's topic config definitions (``LogConfig.configDef``): names, types, defaults, validators, and
``ConfigDef``'s parsing of a value, with Kafka's messages.

One table for every layer that reads topic configs: the admin tools validate what they write (`admin.topic_rules`,
which raises its own `InvalidConfigError` with the same text), brokers parse the overrides they read
(`broker.log_config`). Errors here are `TopicConfigError`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from zkcontroller.java_double import java_double
from zkcontroller.zk.config_values import JAVA_TRIM, ConfigValueError, java_parse_int, parse_boolean


class TopicConfigError(ConfigValueError):
    """``ConfigException``/``InvalidConfigurationException``: an unknown topic config or a bad value."""


class TopicConfigConflictError(TopicConfigError):
    """``LogConfig.validateValues``' ``InvalidConfigurationException``: values each valid, together not (the
    compaction lags). AlterConfigs answers it INVALID_CONFIG, where a refused value is INVALID_REQUEST."""


_JAVA_DECIMAL_DOUBLE = re.compile(r"[+-]?(NaN|Infinity|(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?[fFdD]?)", re.ASCII)
"""``FloatingDecimal.readJavaFormatString``'s decimal grammar: ASCII digits, an exponent needs a digit, one type
suffix at most, and ``NaN``/``Infinity`` spelt exactly, with no suffix. Each string matches one way only (digits
split around an optional dot backtracked quadratically on a long run of digits that ends badly)."""
_JAVA_HEX_DOUBLE = re.compile(
    r"(?P<sign>[+-]?)0[xX](?P<mantissa>[0-9a-fA-F]+\.?|[0-9a-fA-F]*\.[0-9a-fA-F]+)"
    r"[pP][+-]?[0-9]+[fFdD]?", re.ASCII)
"""``FloatingDecimal.parseHexString``'s pattern: the binary exponent is required (``0x1.8`` is refused)."""
_JAVA_WHITESPACE = " \t\n\x0b\f\r"
"""Java regex's ``\\s``."""
_LONG_MAX = 2**63 - 1


def _invalid(name: str, shown: object, message: str) -> TopicConfigError:
    """``ConfigException(name, value, message)``'s wording."""
    return TopicConfigError(f"Invalid value {shown} for configuration {name}: {message}")


@dataclass(frozen=True)
class Range:
    """``ConfigDef.Range``: ``atLeast(low)`` when ``high`` is None, else ``between(low, high)`` (inclusive)."""

    low: int
    high: int | None = None

    def check(self, name: str, value: object) -> None:
        assert isinstance(value, int | float)
        shown = java_double(value) if isinstance(value, float) else value
        if value < self.low:
            raise _invalid(name, shown, f"Value must be at least {self.low}")
        if self.high is not None and value > self.high:
            raise _invalid(name, shown, f"Value must be no more than {self.high}")


@dataclass(frozen=True)
class OneOf:
    """``ConfigDef.ValidString.in``: case-sensitive, choices listed in Kafka's order."""

    choices: tuple[str, ...]

    def check(self, name: str, value: object) -> None:
        if value not in self.choices:
            raise _invalid(name, value, f"String must be one of: {', '.join(self.choices)}")


@dataclass(frozen=True)
class ListOf:
    """``ConfigDef.ValidList.in``: every element one of the choices (an empty list passes, as in Kafka)."""

    choices: tuple[str, ...]

    def check(self, name: str, value: object) -> None:
        assert isinstance(value, list)
        for item in value:
            OneOf(self.choices).check(name, item)


_API_VERSIONS_2_8 = (
    "0.8.0", "0.8.1", "0.8.2", "0.9.0", "0.10.0-IV0", "0.10.0-IV1", "0.10.1-IV0", "0.10.1-IV1", "0.10.1-IV2",
    "0.10.2-IV0", "0.11.0-IV0", "0.11.0-IV1", "0.11.0-IV2", "1.0-IV0", "1.1-IV0", "2.0-IV0", "2.0-IV1",
    "2.1-IV0", "2.1-IV1", "2.1-IV2", "2.2-IV0", "2.2-IV1", "2.3-IV0", "2.3-IV1", "2.4-IV0", "2.4-IV1",
    "2.5-IV0", "2.6-IV0", "2.7-IV0", "2.7-IV1", "2.7-IV2", "2.8-IV0", "2.8-IV1")
"""``ApiVersion.allVersions``' version strings in Kafka 2.8."""
_API_VERSION_KEYS = frozenset(_API_VERSIONS_2_8) | {v.partition("-")[0] for v in _API_VERSIONS_2_8}


class ApiVersionRule:
    """``ApiVersionValidator``: ``ApiVersion.apply`` keys on the first 3 dot-separated parts of a ``0.`` version,
    else the first 2, so ``2.8.1`` and ``0.10.2.x`` are valid and ``3.0`` is not."""

    def check(self, name: str, value: object) -> None:
        text = str(value)
        segments = text.split(".")
        while segments and not segments[-1]:  # Java's split drops trailing empty strings
            segments.pop()
        key = ".".join(segments[:3 if text.startswith("0.") else 2])
        if key not in _API_VERSION_KEYS:
            raise _invalid(name, text, f"Version `{text}` is not a valid version")


class ThrottledReplicas:
    """``ThrottledReplicaListValidator``: the literal ``*``, or ``partition:broker`` items (empty items pass)."""

    def check(self, name: str, value: object) -> None:
        assert isinstance(value, list)
        if all(re.fullmatch(r"([0-9]+:[0-9]+)?", item.strip(JAVA_TRIM)) for item in value):
            return
        if "".join(value).strip(JAVA_TRIM) == "*":  # Scala's mkString: no separator, so "*," passes too
            return
        raise _invalid(name, f"[{', '.join(value)}]",  # a Java List's toString
                       f"{name} must be the literal '*' or a list of replicas in the following format: "
                       "[partitionId]:[brokerId],[partitionId]:[brokerId],...")


Validator = Range | OneOf | ListOf | ApiVersionRule | ThrottledReplicas


@dataclass(frozen=True)
class TopicConfigRule:
    """One ``LogConfig.configDef`` entry: its ``ConfigDef`` type, 2.8 default and validator (None: type only)."""

    type: Literal["BOOLEAN", "INT", "LONG", "DOUBLE", "STRING", "LIST"]
    default: object
    validator: Validator | None = None


_THROTTLED = ThrottledReplicas()
TOPIC_CONFIG_RULES: Mapping[str, TopicConfigRule] = {
    "segment.bytes": TopicConfigRule("INT", 1024 * 1024 * 1024, Range(14)),  # LegacyRecord.RECORD_OVERHEAD_V0
    "segment.ms": TopicConfigRule("LONG", 7 * 24 * 3600 * 1000, Range(1)),
    "segment.jitter.ms": TopicConfigRule("LONG", 0, Range(0)),
    "segment.index.bytes": TopicConfigRule("INT", 10 * 1024 * 1024, Range(0)),
    "flush.messages": TopicConfigRule("LONG", _LONG_MAX, Range(0)),
    "flush.ms": TopicConfigRule("LONG", _LONG_MAX, Range(0)),
    "retention.bytes": TopicConfigRule("LONG", -1),  # negative is allowed: no size limit
    "retention.ms": TopicConfigRule("LONG", 7 * 24 * 3600 * 1000, Range(-1)),
    "max.message.bytes": TopicConfigRule("INT", 1024 * 1024 + 12, Range(0)),  # + Records.LOG_OVERHEAD
    "index.interval.bytes": TopicConfigRule("INT", 4096, Range(0)),
    "delete.retention.ms": TopicConfigRule("LONG", 24 * 3600 * 1000, Range(0)),
    "min.compaction.lag.ms": TopicConfigRule("LONG", 0, Range(0)),
    "max.compaction.lag.ms": TopicConfigRule("LONG", _LONG_MAX, Range(1)),
    "file.delete.delay.ms": TopicConfigRule("LONG", 60000, Range(0)),
    "min.cleanable.dirty.ratio": TopicConfigRule("DOUBLE", 0.5, Range(0, 1)),
    "cleanup.policy": TopicConfigRule("LIST", ["delete"], ListOf(("compact", "delete"))),
    "unclean.leader.election.enable": TopicConfigRule("BOOLEAN", False),
    "min.insync.replicas": TopicConfigRule("INT", 1, Range(1)),
    "compression.type": TopicConfigRule(
        "STRING", "producer", OneOf(("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"))),
    "preallocate": TopicConfigRule("BOOLEAN", False),
    "message.format.version": TopicConfigRule("STRING", "2.8-IV1", ApiVersionRule()),
    "message.timestamp.type": TopicConfigRule("STRING", "CreateTime", OneOf(("CreateTime", "LogAppendTime"))),
    "message.timestamp.difference.max.ms": TopicConfigRule("LONG", _LONG_MAX, Range(0)),
    "leader.replication.throttled.replicas": TopicConfigRule("LIST", [], _THROTTLED),
    "follower.replication.throttled.replicas": TopicConfigRule("LIST", [], _THROTTLED),
    "message.downconversion.enable": TopicConfigRule("BOOLEAN", True),
}
"""Kafka 2.8's ``LogConfig.configDef``, in its definition order (the order ``ConfigDef.parse`` checks values in,
so the first bad value reported is Kafka's)."""


def validate_topic_config_names(names: Iterable[str]) -> None:
    """``LogConfig.validateNames``: the first name that is not a topic config is refused."""
    for name in names:
        if name not in TOPIC_CONFIG_RULES:
            raise TopicConfigError(f"Unknown topic config name: {name}")


def validate_topic_configs(configs: Mapping[str, str]) -> None:
    """Kafka's ``LogConfig.validate``: every name known, every value of its type and valid, then the one
    cross-config rule (``validateValues``: min.compaction.lag.ms not above max.compaction.lag.ms)."""
    validate_topic_config_names(sorted(configs))
    parsed: dict[str, object] = {}
    for name, rule in TOPIC_CONFIG_RULES.items():
        value = parse_config_value(name, rule.type, configs[name]) if name in configs else rule.default
        if rule.validator is not None:
            rule.validator.check(name, value)
        parsed[name] = value
    low, high = parsed["min.compaction.lag.ms"], parsed["max.compaction.lag.ms"]
    assert isinstance(low, int) and isinstance(high, int)
    if low > high:
        raise TopicConfigConflictError(f"conflict topic config setting min.compaction.lag.ms ({low}) > "
                                       f"max.compaction.lag.ms ({high})")


def parse_config_value(name: str, kind: str, raw: str) -> object:
    """``ConfigDef.parseType`` for a string value; a failure shows the value as given, untrimmed."""
    value = raw.strip(JAVA_TRIM)
    if kind == "BOOLEAN":
        return parse_boolean(name, raw, TopicConfigError)
    if kind in ("INT", "LONG"):
        parsed = java_parse_int(value, bits=32 if kind == "INT" else 64)
        if parsed is not None:
            return parsed
        raise _invalid(name, raw, f"Not a number of type {kind}")
    if kind == "DOUBLE":
        number = java_parse_double(value)
        if number is None:
            raise _invalid(name, raw, f"Not a number of type {kind}")
        return number
    if kind == "LIST":
        return _split_list(value) if value else []
    return value


def _split_list(value: str) -> list[str]:
    """``value.split("\\s*,\\s*", -1)`` as Java splits it, in linear time: the regex rescanned a long run of
    spaces with no comma from every start (a megabyte value, half an hour on the event loop)."""
    pieces = value.split(",")
    return ([pieces[0].rstrip(_JAVA_WHITESPACE)]  # a separator's spaces, not the value's own ends
            + [piece.strip(_JAVA_WHITESPACE) for piece in pieces[1:-1]]
            + [pieces[-1].lstrip(_JAVA_WHITESPACE)]) if len(pieces) > 1 else pieces


def java_parse_double(text: str) -> float | None:
    """Java's ``Double.parseDouble``, or None where it throws ``NumberFormatException``.

    Python's ``float`` is more lenient (``inf``, ``1_0``, Unicode digits, no hex) and stricter (no ``1d``, no
    hex), so the grammar is Java's and only the correctly rounded conversion is Python's (as Java's is too). A
    type suffix does not change the precision: ``parseDouble("0.1f")`` is the double nearest 0.1."""
    text = text.strip(JAVA_TRIM)
    if _JAVA_DECIMAL_DOUBLE.fullmatch(text):
        return float(text.rstrip("fFdD"))  # float() rounds huge or tiny exponents to inf or 0, as Java does
    hexadecimal = _JAVA_HEX_DOUBLE.fullmatch(text)
    if hexadecimal is None:
        return None
    try:
        # Rounds half to even, as parseHexString does; an exponent past an int's range (which Java gives up
        # reading) comes out as infinity or zero here too.
        return float.fromhex(text.rstrip("fFdD"))
    except OverflowError:  # beyond Double.MAX_VALUE: Java's infinity
        return -math.inf if hexadecimal["sign"] == "-" else math.inf
