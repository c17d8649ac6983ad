"""The controller mutation quota, ``controller_mutation_rate`` (KIP-599; Kafka 2.8.2's
``ControllerMutationQuotaManager`` with its ``TokenBucket`` stat and the strict and permissive
``ControllerMutationQuota``).

A client's quota is looked up as for the produce quota (the same levels and ``/config/changes`` upkeep:
`client_quota_manager`), but measured by a token bucket, not a sampled rate: the bucket refills at the quota
(mutations per second) up to a burst of ``samples * window * quota`` (11 x 1 s x quota with Kafka's
``controller.quota.window.num`` and ``controller.quota.window.size.seconds`` defaults), and each partition created or
deleted takes a token. The bucket starts empty at time 0, as Kafka's does (``lastUpdateMs = 0``): on the broker's
epoch clock it is full at its first use.

The quota is exhausted once the bucket is below zero; the throttle time is the time to refill it to zero,
``round(-tokens / quota * 1000)`` ms. A *strict* quota (CreateTopics v6+, CreatePartitions v3+, DeleteTopics v5+)
checks before recording: with tokens left, the whole mutation is accepted (the bucket may go below zero); with none,
the topic is refused with THROTTLING_QUOTA_EXCEEDED. A *permissive* quota (older versions) records first and never
refuses; both leave the throttle time for the answer, less the time since it was computed.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from zkcontroller.broker.client_quota_manager import (
    DEFAULT_NUM_QUOTA_SAMPLES,
    DEFAULT_QUOTA_WINDOW_SIZE_SECONDS,
    ClientQuotaManager,
    _java_divide,
    java_round,
    parse_double_quota,
    to_int32,
)
from zkcontroller.java_hash import java_string_hash
from zkcontroller.java_hash import scala_hash_order as java_scala_hash_order
from zkcontroller.runtime.runtime import Runtime
from zkcontroller.zk.quota_configs import CONTROLLER_MUTATION_RATE

log = logging.getLogger("kafka.server.ControllerMutationQuotaManager")

THROTTLING_QUOTA_EXCEEDED = 89
THROTTLING_QUOTA_EXCEEDED_MESSAGE = "The throttling quota has been exceeded."
"""``Errors.THROTTLING_QUOTA_EXCEEDED``' message, which the strict quota's exception carries."""


class ThrottlingQuotaExceeded(Exception):
    """``ThrottlingQuotaExceededException``: a strict quota refused a topic's mutation."""

    def __init__(self, throttle_time_ms: int) -> None:
        super().__init__(THROTTLING_QUOTA_EXCEEDED_MESSAGE)
        self.throttle_time_ms = throttle_time_ms


@dataclass
class TokenBucket:
    """Kafka's ``TokenBucket`` stat (seconds as its unit); ``quota`` and ``burst`` are its metric config's, read at
    each call as Kafka's updated ``MetricConfig`` is."""

    tokens: float = 0.0
    last_update_ms: int = 0
    last_record_ms: int = 0
    """The sensor's last record, for its expiry after an hour without one (`ClientQuotaManager._sensor`)."""

    def _refill(self, quota: float, burst: float, now_ms: int) -> None:
        self.tokens = min(burst, self.tokens + quota * ((now_ms - self.last_update_ms) / 1000))
        self.last_update_ms = now_ms

    def measure(self, quota: float, burst: float, now_ms: int) -> float:
        self._refill(quota, burst, now_ms)
        return self.tokens

    def record(self, quota: float, burst: float, value: float, now_ms: int) -> None:
        self._refill(quota, burst, now_ms)
        self.tokens = min(burst, self.tokens - value)
        self.last_record_ms = now_ms


class ControllerMutationQuota(Protocol):
    """One request's view of its client's quota (Kafka's trait of that name)."""

    def is_exceeded(self) -> bool: ...

    def record(self, permits: float) -> None:
        """Count ``permits`` mutations; a strict quota raises `ThrottlingQuotaExceeded` instead when exhausted."""
        ...

    def throttle_time(self) -> int:
        """The throttle time for the answer: the last violation's, less the time since (0 without one)."""
        ...


class _Unbounded:
    """``UnboundedControllerMutationQuota``: no quota was ever set on this broker."""

    def is_exceeded(self) -> bool:
        return False

    def record(self, permits: float) -> None:
        pass

    def throttle_time(self) -> int:
        return 0


UNBOUNDED: ControllerMutationQuota = _Unbounded()


class _BucketQuota:
    """``AbstractControllerMutationQuota``: the last violation's throttle time and when it was computed."""

    def __init__(self, manager: ControllerMutationQuotaManager, tags: tuple[str, str], bucket: TokenBucket) -> None:
        self._manager = manager
        self._tags = tags
        self._bucket = bucket
        self.last_throttle_time_ms = 0
        self.last_recorded_time_ms = 0

    def _violated(self, tokens: float, now_ms: int) -> None:
        self.last_throttle_time_ms = self._manager.throttle_time_ms(tokens, self._manager.quota_limit(self._tags))
        self.last_recorded_time_ms = now_ms

    def throttle_time(self) -> int:
        delta = self._manager.runtime.now_ms() - self.last_recorded_time_ms
        return to_int32(max(0, self.last_throttle_time_ms - delta))


class StrictControllerMutationQuota(_BucketQuota):
    """Refuses any mutation once the bucket is below zero; accepts one of any size before."""

    def is_exceeded(self) -> bool:
        return self.last_throttle_time_ms > 0

    def record(self, permits: float) -> None:
        now = self._manager.runtime.now_ms()
        tokens = self._manager.measure(self._tags, self._bucket, now)
        if tokens < 0:  # Sensor.checkQuotas on a TokenBucket
            self._violated(tokens, now)
            raise ThrottlingQuotaExceeded(to_int32(self.last_throttle_time_ms))
        self._manager.record(self._tags, self._bucket, permits, now)


class PermissiveControllerMutationQuota(_BucketQuota):
    """Accepts every mutation; throttles once the bucket is below zero."""

    def is_exceeded(self) -> bool:
        return False

    def record(self, permits: float) -> None:
        now = self._manager.runtime.now_ms()
        self._manager.record(self._tags, self._bucket, permits, now)
        tokens = self._manager.measure(self._tags, self._bucket, now)
        if tokens < 0:
            self._violated(tokens, now)


class ControllerMutationQuotaManager(ClientQuotaManager):
    """The ``ControllerMutation`` quota manager: `ClientQuotaManager`'s quota levels and sensor keys, a token
    bucket per sensor."""

    _log = log

    config_key = CONTROLLER_MUTATION_RATE

    def __init__(self, runtime: Runtime, *, samples: int = DEFAULT_NUM_QUOTA_SAMPLES,
                 window_size_seconds: int = DEFAULT_QUOTA_WINDOW_SIZE_SECONDS) -> None:
        super().__init__(runtime, "ControllerMutation", samples=samples, window_size_seconds=window_size_seconds)

    @staticmethod
    def parse_quota(text: str) -> float:
        return parse_double_quota(text)

    def _new_sensor(self, now_ms: int) -> TokenBucket:  # type: ignore[override]
        return TokenBucket(last_record_ms=now_ms)

    def _burst(self, quota: float) -> float:
        return self.samples * (self.window_ms / 1000) * quota

    def measure(self, tags: tuple[str, str], bucket: TokenBucket, now_ms: int) -> float:
        quota = self.quota_limit(tags)
        return bucket.measure(quota, self._burst(quota), now_ms)

    def record(self, tags: tuple[str, str], bucket: TokenBucket, value: float, now_ms: int) -> None:
        quota = self.quota_limit(tags)
        bucket.record(quota, self._burst(quota), value, now_ms)

    @staticmethod
    def throttle_time_ms(tokens: float, quota: float) -> int:
        """``ControllerMutationQuotaManager.throttleTimeMs``: the time to refill the bucket to zero, as a long."""
        return java_round(_java_divide(-tokens, quota) * 1000)

    def record_and_get_throttle_time_ms(self, sanitized_user: str, client_id: str, value: float,
                                        now_ms: int | None = None) -> int:
        """``recordAndGetThrottleTimeMs`` (strict: nothing recorded once exhausted): the throttle time, 0 if the
        value was recorded."""
        now = self.runtime.now_ms() if now_ms is None else now_ms
        tags = self._metric_tags(sanitized_user, client_id)
        bucket = self._sensor(tags, now)
        assert isinstance(bucket, TokenBucket)  # `_new_sensor` makes only buckets here
        tokens = self.measure(tags, bucket, now)
        if tokens < 0:
            throttle = to_int32(self.throttle_time_ms(tokens, self.quota_limit(tags)))
            log.debug("Quota violated for sensor (%s-%s). Delay time: (%d)", self.quota_type, ":".join(tags),
                      throttle)
            return throttle
        self.record(tags, bucket, value, now)
        return 0

    def new_quota_for(self, sanitized_user: str, client_id: str, version: int,
                      strict_since_version: int) -> ControllerMutationQuota:
        """``newQuotaFor``: strict from ``strict_since_version``, permissive before; unbounded while no quota has
        ever been set here."""
        if not self.quotas_enabled:
            return UNBOUNDED
        tags = self._metric_tags(sanitized_user, client_id)
        bucket = self._sensor(tags, self.runtime.now_ms())
        assert isinstance(bucket, TokenBucket)
        cls = StrictControllerMutationQuota if version >= strict_since_version else PermissiveControllerMutationQuota
        return cls(self, tags, bucket)


def scala_hash_order(names: Iterable[str]) -> list[str]:
    """The distinct topic ``names`` in the order of the Scala 2.13 ``mutable.HashSet`` / ``HashMap`` they were
    added to: ``ZkAdminManager`` creates and deletes topics in that order (``toCreate.values``, ``toDelete``), which
    decides, under a strict quota, which topics get through (`java_hash.scala_hash_order`)."""
    return java_scala_hash_order(names, java_string_hash)
