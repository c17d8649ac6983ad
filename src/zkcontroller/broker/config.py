"""The broker settings of replication and ISR upkeep (Kafka 2.8.2's names and defaults; spec §9.8, §10).

``inter.broker.protocol.version`` decides how a leader propagates an ISR change: from 2.7-IV2 on, an AlterIsr
request to the controller; before, the leader writes the partition state itself and publishes ISR-change
notifications. `ReplicationConfig.uses_alter_isr` is where a broker reads that switch (`protocol.ibp`).
"""

from __future__ import annotations

from dataclasses import dataclass

from zkcontroller.protocol.ibp import DEFAULT_IBP, alter_isr_enabled, ibp_at_least, parse_ibp

DEFAULT_LOG_DIRS = ("/tmp/kafka-logs",)
"""Kafka's default ``log.dirs``."""

MAX_RESERVED_BROKER_ID = 1000
"""Kafka's ``reserved.broker.max.id`` default: with ``broker.id.generation.enable`` (default true), the largest
``broker.id`` a broker accepts (generated ids start above it)."""


def virtual_log_dirs(count: int) -> tuple[str, ...]:
    """``count`` log dir names for in-process brokers (no disk behind them: a dir is where a replica is placed and
    what fails together), ``/tmp/kafka-logs-0`` … as one would lay them out for a broker on one host."""
    if count < 1:
        raise ValueError(f"a broker needs at least one log dir, got {count}")
    return tuple(f"/tmp/kafka-logs-{i}" for i in range(count))


@dataclass(frozen=True, slots=True)
class ReplicationConfig:
    """What a broker's replica manager reads. Durations are ms."""

    replica_fetching: bool = True
    """False: followers run no fetchers and leaders no ISR-expiry check (the broker still answers fetches), for
    tests that play a Kafka 2.6 leader by writing ISRs into ZooKeeper themselves."""
    replica_lag_time_max_ms: int = 30000
    """A follower not caught up with the leader's log end for this long leaves the ISR."""
    replica_fetch_wait_max_ms: int = 500
    """How long a follower waits before fetching again when the last fetch brought nothing new."""
    replica_fetch_backoff_ms: int = 1000
    """The pause after a failed fetch (leader unreachable, a partition error)."""
    replica_fetch_max_records: int = 10_000
    """Records per partition per fetch (offsets only: stands in for ``replica.fetch.max.bytes``)."""
    replica_socket_timeout_ms: int = 30000
    """A fetcher's connect to its leader waits this long (ReplicaFetcherBlockingSend's ``awaitReady``), then fails
    with Kafka's ``SocketTimeoutException: Failed to connect within N ms``; the answer waits `request_timeout_ms`."""
    max_incremental_fetch_session_cache_slots: int = 1000
    """Fetch sessions a leader keeps (0: none, every fetch is full)."""
    min_incremental_fetch_session_eviction_ms: int = 120000
    """A session unused this long may be evicted for a new one."""
    inter_broker_protocol_version: str = DEFAULT_IBP
    log_dirs: tuple[str, ...] = DEFAULT_LOG_DIRS
    """``log.dirs``: a new replica goes to the online dir holding fewest partitions; a failed dir takes its
    replicas offline (`KafkaServer.fail_log_dir`). A broker process's server.properties overrides it."""
    request_timeout_ms: int = 30000
    """An AlterIsr unanswered this long is sent again (Kafka's broker-to-controller channel times out; its
    controller never answers an AlterIsr event dropped on resignation); a fetch unanswered this long fails (the
    fetcher's NetworkClient request timeout), then is backed off and retried."""
    alter_isr_retry_backoff_ms: int = 50
    """Kafka's AlterIsrManager retries an unanswered or refused request on its 50 ms scheduler tick."""
    isr_change_notification_check_interval_ms: int = 2500
    """Pre-2.7-IV2 only (Kafka hard-codes 2.5 s / 5 s / 60 s; configurable here so tests can shrink them):
    how often pending ISR changes are looked at, ..."""
    isr_change_notification_linger_ms: int = 5000
    """... published once no change came for this long ..."""
    isr_change_notification_max_delay_ms: int = 60000
    """... or at the latest this long after the previous publication."""

    def __post_init__(self) -> None:
        parse_ibp(self.inter_broker_protocol_version)
        if not self.log_dirs or any(not d.strip() for d in self.log_dirs) or len(set(self.log_dirs)) < len(
                self.log_dirs):
            raise ValueError(f"ReplicationConfig.log_dirs must be distinct non-empty paths, got {self.log_dirs!r}")
        for name in ("replica_lag_time_max_ms", "replica_fetch_max_records",
                     "isr_change_notification_check_interval_ms", "alter_isr_retry_backoff_ms",
                     "replica_socket_timeout_ms", "request_timeout_ms"):
            if getattr(self, name) <= 0:
                raise ValueError(f"ReplicationConfig.{name} must be positive, got {getattr(self, name)}")
        for name in ("replica_fetch_wait_max_ms", "replica_fetch_backoff_ms", "isr_change_notification_linger_ms",
                     "isr_change_notification_max_delay_ms", "max_incremental_fetch_session_cache_slots",
                     "min_incremental_fetch_session_eviction_ms"):
            if getattr(self, name) < 0:
                raise ValueError(f"ReplicationConfig.{name} must not be negative, got {getattr(self, name)}")

    @property
    def uses_alter_isr(self) -> bool:
        """Kafka's ``config.interBrokerProtocolVersion.isAlterIsrSupported``."""
        return alter_isr_enabled(self.inter_broker_protocol_version)

    @property
    def truncates_on_fetch(self) -> bool:
        """Kafka's ``isTruncationOnFetchSupported`` (IBP 2.7-IV1 and later, Fetch v12): a follower sends the epoch
        of its last fetched records and the leader answers a diverging epoch; below it (OffsetsForLeaderEpoch,
        which we do not send) a new follower truncates to its high watermark."""
        return ibp_at_least(self.inter_broker_protocol_version, "2.7-IV1")

    @property
    def isr_expiration_interval_ms(self) -> int:
        """ReplicaManager's ``isr-expiration`` task runs every half lag time."""
        return max(1, self.replica_lag_time_max_ms // 2)
