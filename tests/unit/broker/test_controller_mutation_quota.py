"""The controller mutation quota (Kafka 2.8.2's ``ControllerMutationQuotaManager``, ``TokenBucket`` and the strict
and permissive ``ControllerMutationQuota``), with numbers derived from Kafka's formulas:

- burst ``B = samples * window * quota`` (11 x 1 s x Q with Kafka's defaults);
- ``refill``: ``tokens = min(B, tokens + Q * elapsed_s)``; ``record(v)``: refill, then ``tokens = min(B, tokens - v)``;
- exhausted when ``tokens < 0``; throttle ``Math.round(-tokens / Q * 1000)`` ms;
- the answer's throttle: ``max(0, last throttle - ms since it was computed)``.

The bucket starts at 0 tokens, last updated at time 0: the tests start the clock at ``T0`` = 1000 s, where any quota
below 1e9 has long refilled it to its burst, as an epoch clock does."""

from __future__ import annotations

import pytest
from tests.helpers import ManualRuntime

from zkcontroller.broker.client_quota_manager import ANONYMOUS, DEFAULT, ClientQuotaManager, apply_quota_config
from zkcontroller.broker.controller_mutation_quota import (
    THROTTLING_QUOTA_EXCEEDED_MESSAGE,
    UNBOUNDED,
    ControllerMutationQuotaManager,
    PermissiveControllerMutationQuota,
    StrictControllerMutationQuota,
    ThrottlingQuotaExceeded,
    scala_hash_order,
)

T0 = 1_000_000


def manager_with(quota: float | None, client: str = "c") -> tuple[ControllerMutationQuotaManager, ManualRuntime]:
    runtime = ManualRuntime()
    runtime.now = T0
    manager = ControllerMutationQuotaManager(runtime)  # type: ignore[arg-type]
    if quota is not None:
        manager.update_quota(None, client, quota)
    return manager, runtime


def test_no_quota_ever_set_is_unbounded() -> None:
    manager, _ = manager_with(None)
    quota = manager.new_quota_for(ANONYMOUS, "c", 6, 6)
    assert quota is UNBOUNDED
    quota.record(1e9)
    assert quota.throttle_time() == 0 and not quota.is_exceeded()


def test_strict_accepts_one_mutation_of_any_size_then_refuses() -> None:
    """Q = 2/s, B = 11 x 1 x 2 = 22 tokens, full at T0.
    record(30): 22 >= 0, accepted: tokens = min(22, 22 - 30) = -8; no violation, so no throttle.
    record(1) at once: -8 < 0, refused: throttle round(8 / 2 * 1000) = 4000 ms.
    1 s later the answer's throttle is 4000 - 1000 = 3000."""
    manager, runtime = manager_with(2.0)
    quota = manager.new_quota_for(ANONYMOUS, "c", 6, 6)
    assert isinstance(quota, StrictControllerMutationQuota)
    quota.record(30)
    assert quota.throttle_time() == 0 and not quota.is_exceeded()
    with pytest.raises(ThrottlingQuotaExceeded) as refused:
        quota.record(1)
    assert refused.value.throttle_time_ms == 4000
    assert str(refused.value) == THROTTLING_QUOTA_EXCEEDED_MESSAGE == "The throttling quota has been exceeded."
    assert quota.is_exceeded() and quota.throttle_time() == 4000
    runtime.advance(1000)
    assert quota.throttle_time() == 3000

    # a new request 1 s after T0: tokens = -8 + 2 x 1 = -6, refused, throttle 6 / 2 s = 3000 ms
    later = manager.new_quota_for(ANONYMOUS, "c", 7, 6)
    with pytest.raises(ThrottlingQuotaExceeded) as again:
        later.record(1)
    assert again.value.throttle_time_ms == 3000
    # 3 s more: tokens = -6 + 2 x 3 = 0, not below zero: accepted (tokens -1)
    runtime.advance(3000)
    manager.new_quota_for(ANONYMOUS, "c", 7, 6).record(1)
    assert manager.record_and_get_throttle_time_ms(ANONYMOUS, "c", 1) == 500  # -1 / 2/s = 500 ms


def test_permissive_accepts_everything_and_throttles_once_exhausted() -> None:
    """Q = 2/s, B = 22: record(30) leaves -8 (throttle 4000 ms), record(2) -10 (5000 ms); nothing refused."""
    manager, runtime = manager_with(2.0)
    quota = manager.new_quota_for(ANONYMOUS, "c", 5, 6)  # CreateTopics v5: below the strict version
    assert isinstance(quota, PermissiveControllerMutationQuota)
    quota.record(20)  # 22 - 20 = 2 left
    assert quota.throttle_time() == 0
    quota.record(10)  # -8
    assert quota.throttle_time() == 4000 and not quota.is_exceeded()
    quota.record(2)  # -10
    assert quota.throttle_time() == 5000
    runtime.advance(1200)
    assert quota.throttle_time() == 3800


def test_the_bucket_refills_up_to_its_burst_only() -> None:
    """Q = 2/s, B = 22. After 100 s idle the bucket holds min(22, ...) = 22, not 200: record(23) leaves -1, whose
    throttle is 1 / 2 s = 500 ms (permissive, to read it)."""
    manager, runtime = manager_with(2.0)
    manager.new_quota_for(ANONYMOUS, "c", 0, 6).record(22)  # empty
    runtime.advance(100_000)
    quota = manager.new_quota_for(ANONYMOUS, "c", 0, 6)
    quota.record(23)
    assert quota.throttle_time() == 500


def test_a_changed_quota_applies_to_the_bucket_as_it_is() -> None:
    """Kafka changes the sensor's metric config; the tokens stay. Q = 1/s (B = 11): record(11) empties it. Q then
    4/s (B = 44): 1 s later tokens = 0 + 4 x 1 = 4; record(10) leaves -6: throttle 6 / 4 s = 1500 ms."""
    manager, runtime = manager_with(1.0)
    manager.new_quota_for(ANONYMOUS, "c", 6, 6).record(11)
    manager.update_quota(None, "c", 4.0)
    runtime.advance(1000)
    quota = manager.new_quota_for(ANONYMOUS, "c", 0, 6)
    quota.record(10)
    assert quota.throttle_time() == 1500


def test_a_fractional_quota_and_rounding() -> None:
    """Q = 0.3/s, B = 3.3. record(4) leaves -0.7 (float: 3.3 - 4): throttle Math.round(0.7 / 0.3 * 1000) =
    round(2333.33) = 2333 ms."""
    manager, _ = manager_with(0.3)
    quota = manager.new_quota_for(ANONYMOUS, "c", 0, 6)
    quota.record(4)
    assert quota.throttle_time() == 2333


def test_a_quota_of_zero_throttles_nobody_as_kafkas_overflow_does() -> None:
    """Q = 0: B = 0; a first mutation is accepted (0 is not below 0), then -1 / 0 gives an infinite throttle,
    Long.MaxValue, which ``toInt`` narrows to -1: the answer carries max(-1, 0) = 0."""
    manager, _ = manager_with(0.0)
    quota = manager.new_quota_for(ANONYMOUS, "c", 6, 6)
    quota.record(1)
    with pytest.raises(ThrottlingQuotaExceeded) as refused:
        quota.record(1)
    assert refused.value.throttle_time_ms == -1
    assert quota.is_exceeded() and quota.throttle_time() == -1


def test_clients_without_a_quota_are_not_counted_against_another() -> None:
    """The quota of client "c" leaves client "other" at Long.MaxValue: a burst no request empties."""
    manager, _ = manager_with(1.0)
    quota = manager.new_quota_for(ANONYMOUS, "other", 6, 6)
    quota.record(1e6)
    quota.record(1)
    assert quota.throttle_time() == 0


def test_a_default_client_quota_gives_each_client_its_own_bucket() -> None:
    """``<default client-id>``: each client id has its own sensor (tags), so one exhausting its bucket leaves the
    other's full."""
    manager, _ = manager_with(1.0, client=DEFAULT)
    first = manager.new_quota_for(ANONYMOUS, "a", 6, 6)
    first.record(12)  # 11 - 12 = -1
    with pytest.raises(ThrottlingQuotaExceeded):
        first.record(1)
    manager.new_quota_for(ANONYMOUS, "b", 6, 6).record(11)


def test_the_config_nodes_are_read_as_kafkas_quota_config_handler_does() -> None:
    """``controller_mutation_rate`` is a double (``String.toDouble``); the produce manager reading the same node
    ignores it, and a value that is no number raises (the node is then logged and skipped)."""
    manager, _ = manager_with(None)
    produce = ClientQuotaManager(manager.runtime)
    for quotas in (produce, manager):
        apply_quota_config(quotas, "users", "alice/clients/c", {"controller_mutation_rate": "2.5"})
    assert manager.quota("alice", "c") == 2.5
    assert produce.quota("alice", "c") == float(2**63 - 1)
    with pytest.raises(ValueError, match='For input string: "fast"'):
        apply_quota_config(manager, "clients", "c", {"controller_mutation_rate": "fast"})
    apply_quota_config(manager, "users", "alice/clients/c", {})
    assert manager.quota("alice", "c") == float(2**63 - 1)


def test_scala_hash_order() -> None:
    """Scala 2.13's mutable HashSet/HashMap: bucket ``(h ^ h >>> 16) & (capacity - 1)``, then the hash.
    "a".."l" hash to 97..108 (buckets 1..12 of 16), "q" to 113 (bucket 1, after "a": 113 > 97). Eleven names stay
    in 16 buckets; the twelfth add doubles the table first (11 + 1 >= 16 x 0.75), and in 32 buckets "q" is in 17."""
    assert scala_hash_order(["q", "b", "a"]) == ["a", "q", "b"]
    assert scala_hash_order([*"jihgfedcba", "q"]) == ["a", "q", *"bcdefghij"]
    assert scala_hash_order([*"kjihgfedcba", "q"]) == [*"abcdefghijk", "q"]
    assert scala_hash_order(["b", "a", "b"]) == ["a", "b"]


def test_maybe_record_goes_through_the_token_bucket() -> None:
    """Kafka's ``maybeRecordAndGetThrottleTimeMs`` calls ``recordAndGetThrottleTimeMs``, which this manager overrides:
    the same bucket arithmetic as the strict quota's (Q = 2/s, B = 22: 30 accepted, then 4000 ms); with no quota ever
    set, nothing is recorded."""
    manager, runtime = manager_with(2.0)
    assert manager.maybe_record_and_get_throttle_time_ms(ANONYMOUS, "c", 30) == 0
    assert manager.maybe_record_and_get_throttle_time_ms(ANONYMOUS, "c", 1) == 4000
    runtime.now += 1000
    assert manager.maybe_record_and_get_throttle_time_ms(ANONYMOUS, "c", 1) == 3000
    unset, _ = manager_with(None)
    assert unset.maybe_record_and_get_throttle_time_ms(ANONYMOUS, "c", 1e9) == 0
