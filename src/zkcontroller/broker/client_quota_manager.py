"""Client quotas on a broker (Kafka 2.8.2's ``ClientQuotaManager`` with its ``DefaultQuotaCallback``, the
``Sensor``/``Rate``/``SampledStat`` it measures with, and ``QuotaConfigHandler``): the produce quota,
``producer_byte_rate``, enforced on Produce, and the request quota, ``request_percentage``
(`ClientRequestQuotaManager`: the handling time of every request but the inter-broker ones, timed by `start_request`
and `mark_local_complete`); the controller mutation quota builds on them (`controller_mutation_quota`).

Quotas come from ``/config/users/...`` and ``/config/clients/...`` (`apply_quota_config`, called for each node at
start-up and on each ``/config/changes`` notification naming one). A request's client is its user (every client
is ``ANONYMOUS`` here: no authentication) and its client id; the most specific quota set applies:
``<user, client-id>``, ``<user, default client-id>``, ``<user>``, ``<default user, client-id>``,
``<default user, default client-id>``, ``<default user>``, ``<client-id>``, ``<default client-id>``. Clients sharing
that quota share one byte-rate sensor, keyed as Kafka keys it (`_metric_tags`).

IP connection-rate quotas (``/config/ips/<ip>``, ``connection_creation_rate``: Kafka's ``IpConfigHandler`` and
``ConnectionQuotas.updateIpConnectionRateQuota``) are read and kept as Kafka keeps them, with its lines
(`IpConnectionRateQuotas`), but not enforced: the brokers' acceptors here throttle no connection.

The rate is Kafka's sampled rate: 11 samples of 1 s (``quota.window.num``, ``quota.window.size.seconds``), the
sum of the retained samples over the elapsed window, never counted as less than 10 full windows. A request that
pushes it above the quota is still served; its throttle time is the delay that would bring the rate back to the
quota, ``(rate - quota) / quota * window``, rounded as Java's ``Math.round``. Time is the broker's runtime clock.
"""

from __future__ import annotations

import ipaddress
import logging
import math
import unicodedata
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field

from zkcontroller.runtime.runtime import Runtime
from zkcontroller.zk.config_values import INT_MAX, java_parse_int
from zkcontroller.zk.java_text import IllegalArgumentException, NumberFormatException, java_trim
from zkcontroller.zk.log_config_def import java_parse_double
from zkcontroller.zk.quota_configs import IP_CONNECTION_RATE, PRODUCER_BYTE_RATE, REQUEST_PERCENTAGE, desanitize

log = logging.getLogger("kafka.server.ClientQuotaManager")
connection_quotas_log = logging.getLogger("kafka.network.ConnectionQuotas")

DEFAULT = "<default>"
LONG_MAX = 2**63 - 1
DEFAULT_NUM_QUOTA_SAMPLES = 11
DEFAULT_QUOTA_WINDOW_SIZE_SECONDS = 1
INACTIVE_SENSOR_EXPIRATION_MS = 3600 * 1000
"""Kafka purges a client's sensors after an hour without a record; a new sensor starts with no history."""
ANONYMOUS = "ANONYMOUS"
"""``KafkaPrincipal.ANONYMOUS``' name: the user of every unauthenticated connection."""

NO_QUOTAS, CLIENT_ID_QUOTA_ENABLED, USER_QUOTA_ENABLED, USER_CLIENT_ID_QUOTA_ENABLED = 0, 1, 2, 4
"""``QuotaTypes``: which levels have ever had a quota on this broker (until its restart)."""

UserEntity = str | None
"""A sanitized user, `DEFAULT`, or None (no user level)."""
ClientEntity = str | None
"""A (desanitized) client id, `DEFAULT`, or None."""


@dataclass
class _Sample:
    last_window_ms: int
    value: float = 0.0

    def reset(self, now_ms: int) -> None:
        self.last_window_ms, self.value = now_ms, 0.0


@dataclass
class Rate:
    """``Rate`` over a ``WindowedSum`` (``SampledStat``): ``samples`` windows of ``window_ms`` each."""

    samples: int = DEFAULT_NUM_QUOTA_SAMPLES
    window_ms: int = DEFAULT_QUOTA_WINDOW_SIZE_SECONDS * 1000
    _samples: list[_Sample] = field(default_factory=list)
    _current: int = 0
    last_record_ms: int = 0

    def record(self, value: float, now_ms: int) -> None:
        sample = self._current_sample(now_ms)
        if now_ms - sample.last_window_ms >= self.window_ms:  # Sample.isComplete (no event window)
            self._current = (self._current + 1) % self.samples
            if self._current >= len(self._samples):
                sample = _Sample(now_ms)
                self._samples.append(sample)
            else:
                sample = self._samples[self._current]
                sample.reset(now_ms)
        sample.value += value
        self.last_record_ms = now_ms

    def _current_sample(self, now_ms: int) -> _Sample:
        if not self._samples:
            self._samples.append(_Sample(now_ms))
        return self._samples[self._current]

    def _purge(self, now_ms: int) -> None:
        """``purgeObsoleteSamples``: a sample older than every window together starts again, empty, now."""
        for sample in self._samples:
            if now_ms - sample.last_window_ms >= self.samples * self.window_ms:
                sample.reset(now_ms)

    def window_size_ms(self, now_ms: int) -> int:
        """``Rate.windowSize``: from the oldest sample's start to now, at least ``samples - 1`` full windows."""
        self._purge(now_ms)
        if not self._samples:
            self._samples.append(_Sample(now_ms))
        elapsed = now_ms - min(s.last_window_ms for s in self._samples)
        full = elapsed // self.window_ms
        if full < self.samples - 1:
            elapsed += (self.samples - 1 - full) * self.window_ms
        return elapsed

    def measure(self, now_ms: int) -> float:
        """Per second."""
        self._purge(now_ms)
        total = sum(s.value for s in self._samples)
        return total / (self.window_size_ms(now_ms) / 1000)


def java_round(value: float) -> int:
    """``Math.round(double)``: floor(x + 0.5), NaN 0, saturated at the long bounds."""
    if math.isnan(value):
        return 0
    if math.isinf(value):
        return LONG_MAX if value > 0 else -LONG_MAX - 1
    return max(-LONG_MAX - 1, min(LONG_MAX, math.floor(value + 0.5)))


def _java_divide(a: float, b: float) -> float:
    """Java's double division: by zero, an infinity of the quotient's sign (NaN for 0 / 0)."""
    if b != 0:
        return a / b
    if a == 0 or math.isnan(a):
        return math.nan
    return math.copysign(math.inf, a) * math.copysign(1.0, b)


def to_int32(value: int) -> int:
    """Scala's ``Long.toInt``: the low 32 bits, signed (an infinite throttle, Long.MaxValue, becomes -1)."""
    value &= 0xFFFFFFFF
    return value - 2**32 if value >= 2**31 else value


class ClientQuotaManager:
    """One quota type's manager (Kafka has one each for produce, fetch, request and controller mutations; the
    brokers here enforce the produce one and, in `controller_mutation_quota`, the controller mutation one).
    ``now_ms`` is the runtime's clock."""

    _log = log
    """Kafka's ``Logging`` names the logger after the concrete class (``getClass.getName``)."""

    config_key = PRODUCER_BYTE_RATE
    """The quota's key in a ``/config/users|clients`` node (`apply_quota_config`)."""

    def __init__(self, runtime: Runtime, quota_type: str = "Produce", *,
                 quota_default: int = LONG_MAX, samples: int = DEFAULT_NUM_QUOTA_SAMPLES,
                 window_size_seconds: int = DEFAULT_QUOTA_WINDOW_SIZE_SECONDS) -> None:
        self.runtime = runtime
        self.quota_type = quota_type
        self.samples = samples
        self.window_ms = window_size_seconds * 1000
        self._static_client_quota = float(quota_default)
        self.quota_types_enabled = NO_QUOTAS if quota_default == LONG_MAX else CLIENT_ID_QUOTA_ENABLED
        self._overridden: dict[tuple[UserEntity, ClientEntity], float] = {}
        self._sensors: dict[tuple[str, str], Rate] = {}

    @property
    def quotas_enabled(self) -> bool:
        return self.quota_types_enabled != NO_QUOTAS

    # ------------------------------------------------------------------ quotas

    def update_quota(self, sanitized_user: str | None, client_id: str | None, quota: float | None) -> None:
        """``updateQuota``: set (or, with None, remove) the quota of ``<user>``, ``<client-id>`` or ``<user,
        client-id>``, either part possibly `DEFAULT`."""
        entity = (sanitized_user, client_id)
        if sanitized_user is not None:
            self.quota_types_enabled |= USER_CLIENT_ID_QUOTA_ENABLED if client_id is not None else USER_QUOTA_ENABLED
        elif client_id is not None:
            self.quota_types_enabled |= CLIENT_ID_QUOTA_ENABLED
        if quota is None:
            if self._overridden.pop(entity, None) is not None:
                self._log.info("Removing %s quota for %s", self.quota_type, _entity_text(entity))
        else:
            self._log.info("Changing %s quota for %s to %s", self.quota_type, _entity_text(entity), quota)
            self._overridden[entity] = quota

    def _metric_tags(self, sanitized_user: str, client_id: str) -> tuple[str, str]:
        """``DefaultQuotaCallback.quotaMetricTags``: the (user, client-id) a client's sensor is keyed by; a level
        no quota uses is ""."""
        enabled = self.quota_types_enabled
        if enabled in (NO_QUOTAS, CLIENT_ID_QUOTA_ENABLED):
            return "", client_id
        if enabled == USER_QUOTA_ENABLED:
            return sanitized_user, ""
        if enabled == USER_CLIENT_ID_QUOTA_ENABLED:
            return sanitized_user, client_id
        has = self._overridden.__contains__
        if has((sanitized_user, client_id)) or has((sanitized_user, DEFAULT)):
            return sanitized_user, client_id
        if has((sanitized_user, None)):
            return sanitized_user, ""
        if has((DEFAULT, client_id)) or has((DEFAULT, DEFAULT)):
            return sanitized_user, client_id
        if has((DEFAULT, None)):
            return sanitized_user, ""
        return "", client_id

    def quota_limit(self, tags: tuple[str, str]) -> float:
        """``DefaultQuotaCallback.quotaLimit`` for a sensor's tags (no quota: Long.MaxValue)."""
        user, client = tags
        get = self._overridden.get
        quota: float | None = None
        if user and client:
            for entity in ((user, client), (user, DEFAULT), (DEFAULT, client), (DEFAULT, DEFAULT)):
                if (quota := get(entity)) is not None:
                    break
        elif user:
            quota = get((user, None))
            if quota is None:
                quota = get((DEFAULT, None))
        elif client:
            quota = get((None, client))
            if quota is None:
                quota = get((None, DEFAULT))
            if quota is None:
                quota = self._static_client_quota
        return float(LONG_MAX) if quota is None else quota

    def quota(self, sanitized_user: str, client_id: str) -> float:
        """The quota a client has now (Kafka's test helper ``quota``)."""
        return self.quota_limit(self._metric_tags(sanitized_user, client_id))

    # ------------------------------------------------------------------ recording

    @staticmethod
    def parse_quota(text: str) -> float:
        """The quota as ``QuotaConfigHandler`` reads it: ``String.toLong`` for the byte rates;
        `NumberFormatException` (a ValueError) with Java's message where that throws."""
        value = java_parse_int(text, bits=64)
        if value is None:
            raise NumberFormatException(f'For input string: "{text}"')
        return float(value)

    def _new_sensor(self, now_ms: int) -> Rate:
        """A new client sensor's quota stat (the token bucket for controller mutations)."""
        return Rate(self.samples, self.window_ms, last_record_ms=now_ms)

    def _sensor(self, tags: tuple[str, str], now_ms: int) -> Rate:
        sensor = self._sensors.get(tags)
        if sensor is not None and now_ms - sensor.last_record_ms > INACTIVE_SENSOR_EXPIRATION_MS:
            sensor = None  # expired: Kafka's Metrics removed it
        if sensor is None:
            expired = INACTIVE_SENSOR_EXPIRATION_MS
            for key in [k for k, s in self._sensors.items() if now_ms - s.last_record_ms > expired]:
                del self._sensors[key]
            sensor = self._sensors[tags] = self._new_sensor(now_ms)
        return sensor

    def maybe_record_and_get_throttle_time_ms(self, sanitized_user: str, client_id: str, value: float,
                                              now_ms: int | None = None) -> int:
        """``maybeRecordAndGetThrottleTimeMs``: 0 while no quota has ever been set here, else
        `record_and_get_throttle_time_ms` (which a subclass's quota stat overrides, as in Kafka)."""
        if not self.quotas_enabled:
            return 0
        return self.record_and_get_throttle_time_ms(sanitized_user, client_id, value, now_ms)

    def record_and_get_throttle_time_ms(self, sanitized_user: str, client_id: str, value: float,
                                        now_ms: int | None = None) -> int:
        """``recordAndGetThrottleTimeMs``: record ``value`` (a Produce's size in bytes) against the client's
        quota; the throttle time in ms, 0 within the quota."""
        now = self.runtime.now_ms() if now_ms is None else now_ms
        tags = self._metric_tags(sanitized_user, client_id)
        sensor = self._sensor(tags, now)
        sensor.record(value, now)
        bound = self.quota_limit(tags)
        rate = sensor.measure(now)
        if rate <= bound:  # Quota.acceptable for an upper bound
            return 0
        throttle = to_int32(self._throttle_time(rate, bound, sensor.window_size_ms(now)))
        self._log.debug("Quota violated for sensor (%s-%s). Delay time: (%d)", self.quota_type, ":".join(tags),
                        throttle)
        return throttle

    def _throttle_time(self, rate: float, bound: float, window_ms: int) -> int:
        """``QuotaUtils.throttleTime``: ``(rate - quota) / quota * window``, as ``Math.round`` (a long)."""
        return java_round(_java_divide(rate - bound, bound) * window_ms)

    def throttle(self, throttle_ms: int) -> Callable[[], Awaitable[None]]:
        """``throttle``'s ``ThrottledChannel``: from now, ``throttle_ms`` on the runtime's clock; the socket server
        awaits it before reading the connection's next request (the channel is muted until then)."""
        end_ms = self.runtime.now_ms() + throttle_ms

        async def muted() -> None:
            await self.runtime.sleep_ms(max(0, end_ms - self.runtime.now_ms()))

        return muted


def _entity_text(entity: tuple[UserEntity, ClientEntity]) -> str:
    """``KafkaQuotaEntity.toString``."""
    user, client = entity
    parts = []
    if user is not None:
        parts.append("default user" if user == DEFAULT else f"user {user}")
    if client is not None:
        parts.append("default client-id" if client == DEFAULT else f"client-id {client}")
    return " ".join(parts)


def apply_quota_config(manager: ClientQuotaManager, entity_type: str, full_sanitized_name: str,
                       configs: Mapping[str, str]) -> None:
    """``ClientIdConfigHandler``/``UserConfigHandler.processConfigChanges`` for ``manager``'s quota (its
    `config_key`): the node ``clients/<id>``, ``users/<user>`` or ``users/<user>/clients/<id>`` now holds
    ``configs``. Raises what Kafka throws (`IllegalArgumentException`, `NumberFormatException`: ValueErrors) for
    a path or a value it cannot read: a notification's failure is logged by the listener as Kafka's."""
    sanitized_client: str | None
    if entity_type == "clients":
        user, sanitized_client = None, full_sanitized_name
    elif entity_type == "users":
        parts = full_sanitized_name.split("/")
        if len(parts) not in (1, 3):
            raise IllegalArgumentException(f"Invalid quota entity path: {full_sanitized_name}")
        user, sanitized_client = parts[0], parts[2] if len(parts) == 3 else None
    else:
        raise ValueError(f"not a client quota entity type: {entity_type}")
    client = None if sanitized_client is None else \
        DEFAULT if sanitized_client == DEFAULT else desanitize(sanitized_client)
    key = manager.config_key
    manager.update_quota(user, client, manager.parse_quota(configs[key]) if key in configs else None)


# ---------------------------------------------------------------------------------------------- request quota

NANOS_TO_PERCENTAGE_PER_SECOND = 100.0 / 1_000_000_000
"""``ClientRequestQuotaManager.NanosToPercentagePerSecond``: handling time recorded as a percentage of one thread."""


def parse_double_quota(text: str) -> float:
    """A DOUBLE quota (``request_percentage``, ``controller_mutation_rate``) as ``QuotaConfigHandler`` reads it:
    ``String.toDouble`` (``Double.parseDouble``); `NumberFormatException` (a ValueError) with Java's message where
    that throws."""
    value = java_parse_double(text)
    if value is None:
        trimmed = java_trim(text)  # FloatingDecimal names the trimmed text
        raise NumberFormatException(f'For input string: "{trimmed}"' if trimmed else "empty String")
    return value


class ClientRequestQuotaManager(ClientQuotaManager):
    """Kafka 2.8.2's ``ClientRequestQuotaManager``: ``request_percentage``, the time spent handling a client's
    requests as a percentage of one request handler thread, on the sampled rate of `ClientQuotaManager`; a throttle
    is at most one quota window (``QuotaUtils.boundedThrottleTime``)."""

    _log = logging.getLogger("kafka.server.ClientRequestQuotaManager")

    config_key = REQUEST_PERCENTAGE

    def __init__(self, runtime: Runtime, *, samples: int = DEFAULT_NUM_QUOTA_SAMPLES,
                 window_size_seconds: int = DEFAULT_QUOTA_WINDOW_SIZE_SECONDS) -> None:
        super().__init__(runtime, "Request", samples=samples, window_size_seconds=window_size_seconds)
        self.max_throttle_time_ms = self.window_ms
        self.exempt = Rate(samples, self.window_ms)
        """``exempt-request-time``: the handling time of exempt requests (inter-broker ones), a metric only."""

    @staticmethod
    def parse_quota(text: str) -> float:
        return parse_double_quota(text)

    def _throttle_time(self, rate: float, bound: float, window_ms: int) -> int:
        return min(super()._throttle_time(rate, bound, window_ms), self.max_throttle_time_ms)

    @staticmethod
    def percentage(handling_ms: int) -> float:
        """``nanosToPercentage`` of a handling time measured in ms on the runtime clock."""
        return handling_ms * 1_000_000 * NANOS_TO_PERCENTAGE_PER_SECOND

    def maybe_record_request(self, sanitized_user: str, client_id: str, handling_ms: int) -> int:
        """``maybeRecordAndGetThrottleTimeMs(request, timeMs)``: the request's handling time against the client's
        quota; the throttle time in ms (0 within it, or with no quota ever set here)."""
        return self.maybe_record_and_get_throttle_time_ms(sanitized_user, client_id, self.percentage(handling_ms))

    def maybe_record_exempt(self, handling_ms: int) -> None:
        """``maybeRecordExempt``: an exempt request's time, recorded (with quotas on) but never throttled."""
        if self.quotas_enabled:
            self.exempt.record(self.percentage(handling_ms), self.runtime.now_ms())


@dataclass
class RequestTime:
    """When one request's handling started and when its own work ended (``RequestChannel.Request``'s
    ``requestDequeueTimeNanos`` and ``apiLocalCompleteTimeNanos``, in ms on the runtime clock): a wait for other
    brokers or the controller (Kafka's purgatories) after `mark_local_complete` is not handling time."""

    started_ms: int
    local_complete_ms: int = -1

    def handling_ms(self, now_ms: int) -> int:
        """``requestThreadTimeNanos``: until the local completion, or now if not marked."""
        if self.local_complete_ms < 0:
            self.local_complete_ms = now_ms
        return max(self.local_complete_ms - self.started_ms, 0)


_request_time: ContextVar[RequestTime | None] = ContextVar("request_time", default=None)


def start_request(now_ms: int) -> RequestTime:
    """The request now being handled in this task (KafkaApis sets it as a request comes in)."""
    timing = RequestTime(now_ms)
    _request_time.set(timing)
    return timing


def current_request() -> RequestTime | None:
    """The request being handled in this task, if KafkaApis timed it."""
    return _request_time.get()


def mark_local_complete(now_ms: int) -> None:
    """The handler's own work for the request being handled is done; what follows is a wait (Kafka's
    ``DelayedCreatePartitions``, ``DelayedDeleteTopics``...), not counted against its request quota."""
    timing = _request_time.get()
    if timing is not None and timing.local_complete_ms < 0:
        timing.local_complete_ms = now_ms


# ---------------------------------------------------------------------------------------------- IP connection rate

IP_CONNECTION_RATE_DEFAULT = 2**31 - 1
"""``QuotaConfigs.IP_CONNECTION_RATE_DEFAULT`` (``Integer.MAX_VALUE``): no quota."""


def _java_ipv4(text: str) -> bytes | None:
    """``IPAddressUtil.textToNumericFormatV4`` (JDK 11 to 17): one to four decimal parts (any Unicode decimal
    digit, as ``Character.digit``), the last filling the remaining bytes (``127.1`` is 127.0.0.1); None if not."""
    if not text or len(text) > 15:
        return None
    parts: list[int] = []
    value, new_part = 0, True
    for char in text:
        if char == ".":
            if new_part or value > 0xFF or len(parts) == 3:
                return None
            parts.append(value)
            value, new_part = 0, True
        else:
            digit = unicodedata.decimal(char, -1) if ord(char) <= 0xFFFF else -1
            if digit < 0:
                return None
            value, new_part = value * 10 + digit, False
    if new_part or value >= 1 << ((4 - len(parts)) * 8):
        return None
    return bytes(parts) + value.to_bytes(4 - len(parts), "big")


def java_ip_literal(host: str) -> str:
    """``InetAddress.getByName(host).toString`` for an IP literal (IPv4 as Java reads it, IPv6 in brackets or not,
    an IPv4-mapped one as its IPv4 address): ``/1.2.3.4``, ``/0:0:0:0:0:0:0:1``. Anything else raises what
    ``IpConfigHandler`` throws, ``IllegalArgumentException: Unable to resolve address <ip>``: Kafka would look a
    host name up (and throw only when that fails); the brokers here resolve no names (nor IPv6 zone names)."""
    unresolved = IllegalArgumentException(f"Unable to resolve address {host}")
    literal, ipv6_expected = host, False
    if host.startswith("["):
        if len(host) <= 2 or not host.endswith("]"):
            raise unresolved
        literal, ipv6_expected = host[1:-1], True
    if not literal or not (literal[0] == ":" or literal[0] in "0123456789abcdefABCDEF"
                           or unicodedata.decimal(literal[0], -1) >= 0):
        raise unresolved  # a host name (or the empty one, the loopback address)
    v4 = None if ipv6_expected else _java_ipv4(literal)
    if v4 is not None:
        return "/" + ".".join(map(str, v4))
    address, percent, zone = literal.partition("%")
    significant = zone.lstrip("0")
    # checkNumericZone: a scope id past Integer.MAX_VALUE is no number but an interface name (none resolved here)
    if percent and not (zone.isascii() and zone.isdigit() and len(significant) <= 10
                        and int(significant or "0") <= INT_MAX):
        raise unresolved
    try:
        v6 = ipaddress.IPv6Address(address)
    except ValueError:
        raise unresolved from None
    if v6.ipv4_mapped is not None:
        return f"/{v6.ipv4_mapped}"
    groups = [int.from_bytes(v6.packed[i:i + 2], "big") for i in range(0, 16, 2)]
    return "/" + ":".join(f"{g:x}" for g in groups) + (f"%{int(significant or '0')}" if zone else "")


class IpConnectionRateQuotas:
    """``ConnectionQuotas``' IP connection-rate quotas: the default (``ips/<default>``) and the overrides, by
    address (Java's ``InetAddress.toString``: ``/1.2.3.4``). Kept and logged only (see the module)."""

    def __init__(self) -> None:
        self.default_rate = IP_CONNECTION_RATE_DEFAULT
        self.per_ip: dict[str, int] = {}

    def update(self, address: str | None, rate: int | None) -> None:
        """``updateIpConnectionRateQuota``: an address's override set or removed, or (None) the default."""
        if address is None:
            self.default_rate = IP_CONNECTION_RATE_DEFAULT if rate is None else rate
            connection_quotas_log.info("Updated default max IP connection rate to %d", self.default_rate)
        elif rate is None:
            connection_quotas_log.info("Removing max connection rate override for %s", address)
            self.per_ip.pop(address, None)
        else:
            connection_quotas_log.info("Updating max connection rate override for %s to %d", address, rate)
            self.per_ip[address] = rate


def apply_ip_quota_config(quotas: IpConnectionRateQuotas, ip: str, configs: Mapping[str, str]) -> None:
    """``IpConfigHandler.processConfigChanges``: the rate read as Scala's ``toInt`` (``NumberFormatException``),
    then the address (`java_ip_literal`), as Kafka does them."""
    text = configs.get(IP_CONNECTION_RATE)
    rate = None if text is None else java_parse_int(text)
    if text is not None and rate is None:
        raise NumberFormatException(f'For input string: "{text}"')
    quotas.update(None if ip == DEFAULT else java_ip_literal(ip), rate)
