"""The broker configuration the controller reads (spec §10), with Kafka 2.8.2's defaults."""

from __future__ import annotations

from dataclasses import dataclass

from zkcontroller.protocol.ibp import DEFAULT_IBP, resolve_ibp


@dataclass(frozen=True, slots=True)
class ControllerConfig:
    broker_id: int
    unclean_leader_election_enable: bool = False
    auto_leader_rebalance_enable: bool = True
    leader_imbalance_check_interval_seconds: int = 300
    leader_imbalance_per_broker_percentage: int = 10
    auto_leader_rebalance_first_delay_ms: int = 5000
    """Ours: Kafka hard-codes the first imbalance check at 5 s after failover; tests shorten it."""
    delete_topic_enable: bool = True
    controlled_shutdown_enable: bool = True
    controlled_shutdown_max_retries: int = 3
    controlled_shutdown_retry_backoff_ms: int = 5000
    zookeeper_max_in_flight_requests: int = 10
    """The broker's KafkaZkClient bounds its pipelined reads and fenced multis with it (`BatchLimits`)."""
    controller_socket_timeout_ms: int = 30000
    request_timeout_ms: int = 30000
    inter_broker_protocol_version: str = DEFAULT_IBP
    failover_retry_backoff_ms: int = 1000
    """Ours, not Kafka's: the wait before a broker whose failover failed gives up /controller; doubles with
    each failure in a row up to ``failover_retry_backoff_max_ms`` (Kafka resigns at once, see kafka_controller)."""
    failover_retry_backoff_max_ms: int = 30000

    def __post_init__(self) -> None:
        resolve_ibp(self.inter_broker_protocol_version)  # an unknown IBP is refused here, naming the setting
