"""The inter-broker APIs of Kafka 2.8 as one declarative table, taken from Kafka 2.8.2's JSON message schemas
(``clients/src/main/resources/common/message``): LeaderAndIsr, StopReplica, UpdateMetadata,
ControlledShutdown, AlterIsr, and Fetch as far as the replica fetcher uses it.

Recent Kafka (and so `kio`, generated from 4.x schemas) no longer carries most of these, hence our own table.
Field names are the schemas' names in snake_case; versions, nullable versions, tags and defaults are theirs.
`codec` encodes and decodes every entry; nothing here is code.
"""

from __future__ import annotations

from zkcontroller.protocol.ibp import DEFAULT_IBP, request_versions
from zkcontroller.protocol.wire.schema import ApiSpec, Field, MessageSpec

F = Field

# ---------------------------------------------------------------------------------------------- LeaderAndIsr (4)

_LAI_PARTITION_STATE = (
    F("topic_name", "string", "0-1"),
    F("partition_index", "int32"),
    F("controller_epoch", "int32"),
    F("leader", "int32"),
    F("leader_epoch", "int32"),
    F("isr", "[]int32"),
    F("zk_version", "int32"),
    F("replicas", "[]int32"),
    F("adding_replicas", "[]int32", "3+"),
    F("removing_replicas", "[]int32", "3+"),
    F("is_new", "bool", "1+"),
)
_LAI_PARTITION_ERROR = (
    F("topic_name", "string", "0-4"),
    F("partition_index", "int32"),
    F("error_code", "int16"),
)
LEADER_AND_ISR = ApiSpec(4, "LeaderAndIsr", MessageSpec("LeaderAndIsrRequest", "0-5", "4+", (
    F("controller_id", "int32"),
    F("controller_epoch", "int32"),
    F("broker_epoch", "int64", "2+", default=-1),
    F("type", "int8", "5+"),
    F("ungrouped_partition_states", "[]", "0-1", fields=_LAI_PARTITION_STATE),
    F("topic_states", "[]", "2+", fields=(
        F("topic_name", "string", "2+"),
        F("topic_id", "uuid", "5+"),
        F("partition_states", "[]", "2+", fields=_LAI_PARTITION_STATE),
    )),
    F("live_leaders", "[]", fields=(
        F("broker_id", "int32"),
        F("host_name", "string"),
        F("port", "int32"),
    )),
)), MessageSpec("LeaderAndIsrResponse", "0-5", "4+", (
    F("error_code", "int16"),
    F("partition_errors", "[]", "0-4", fields=_LAI_PARTITION_ERROR),
    F("topics", "[]", "5+", fields=(
        F("topic_id", "uuid", "5+"),
        F("partition_errors", "[]", "5+", fields=_LAI_PARTITION_ERROR),
    )),
)))

# ---------------------------------------------------------------------------------------------- StopReplica (5)

STOP_REPLICA = ApiSpec(5, "StopReplica", MessageSpec("StopReplicaRequest", "0-3", "2+", (
    F("controller_id", "int32"),
    F("controller_epoch", "int32"),
    F("broker_epoch", "int64", "1+", default=-1),
    F("delete_partitions", "bool", "0-2"),
    F("ungrouped_partitions", "[]", "0", fields=(
        F("topic_name", "string", "0"),
        F("partition_index", "int32", "0"),
    )),
    F("topics", "[]", "1-2", fields=(
        F("name", "string", "1-2"),
        F("partition_indexes", "[]int32", "1-2"),
    )),
    F("topic_states", "[]", "3+", fields=(
        F("topic_name", "string", "3+"),
        F("partition_states", "[]", "3+", fields=(
            F("partition_index", "int32", "3+"),
            F("leader_epoch", "int32", "3+", default=-1),
            F("delete_partition", "bool", "3+"),
        )),
    )),
)), MessageSpec("StopReplicaResponse", "0-3", "2+", (
    F("error_code", "int16"),
    F("partition_errors", "[]", fields=(
        F("topic_name", "string"),
        F("partition_index", "int32"),
        F("error_code", "int16"),
    )),
)))

# ---------------------------------------------------------------------------------------------- UpdateMetadata (6)

UPDATE_METADATA = ApiSpec(6, "UpdateMetadata", MessageSpec("UpdateMetadataRequest", "0-7", "6+", (
    F("controller_id", "int32"),
    F("controller_epoch", "int32"),
    F("broker_epoch", "int64", "5+", default=-1),
    F("ungrouped_partition_states", "[]", "0-4", fields=(
        _UMD_STATE := (
            F("topic_name", "string", "0-4"),
            F("partition_index", "int32"),
            F("controller_epoch", "int32"),
            F("leader", "int32"),
            F("leader_epoch", "int32"),
            F("isr", "[]int32"),
            F("zk_version", "int32"),
            F("replicas", "[]int32"),
            F("offline_replicas", "[]int32", "4+"),
        )
    )),
    F("topic_states", "[]", "5+", fields=(
        F("topic_name", "string", "5+"),
        F("topic_id", "uuid", "7+"),
        F("partition_states", "[]", "5+", fields=_UMD_STATE),
    )),
    F("live_brokers", "[]", fields=(
        F("id", "int32"),
        F("v0_host", "string", "0"),
        F("v0_port", "int32", "0"),
        F("endpoints", "[]", "1+", fields=(
            F("port", "int32", "1+"),
            F("host", "string", "1+"),
            F("listener", "string", "3+"),
            F("security_protocol", "int16", "1+"),
        )),
        F("rack", "string", "2+", nullable="0+"),
    )),
)), MessageSpec("UpdateMetadataResponse", "0-7", "6+", (
    F("error_code", "int16"),
)))

# ---------------------------------------------------------------------------------------------- ControlledShutdown (7)

CONTROLLED_SHUTDOWN = ApiSpec(7, "ControlledShutdown", MessageSpec("ControlledShutdownRequest", "0-3", "3+", (
    F("broker_id", "int32"),
    F("broker_epoch", "int64", "2+", default=-1),
)), MessageSpec("ControlledShutdownResponse", "0-3", "3+", (
    F("error_code", "int16"),
    F("remaining_partitions", "[]", fields=(
        F("topic_name", "string"),
        F("partition_index", "int32"),
    )),
)))

# ---------------------------------------------------------------------------------------------- AlterIsr (56)

ALTER_ISR = ApiSpec(56, "AlterIsr", MessageSpec("AlterIsrRequest", "0", "0+", (
    F("broker_id", "int32"),
    F("broker_epoch", "int64", default=-1),
    F("topics", "[]", fields=(
        F("name", "string"),
        F("partitions", "[]", fields=(
            F("partition_index", "int32"),
            F("leader_epoch", "int32"),
            F("new_isr", "[]int32"),
            F("current_isr_version", "int32"),
        )),
    )),
)), MessageSpec("AlterIsrResponse", "0", "0+", (
    F("throttle_time_ms", "int32"),
    F("error_code", "int16"),
    F("topics", "[]", fields=(
        F("name", "string"),
        F("partitions", "[]", fields=(
            F("partition_index", "int32"),
            F("error_code", "int16"),
            F("leader_id", "int32"),
            F("leader_epoch", "int32"),
            F("isr", "[]int32"),
            F("current_isr_version", "int32"),
        )),
    )),
)))

# ---------------------------------------------------------------------------------------------- Fetch (1)

FETCH = ApiSpec(1, "Fetch", MessageSpec("FetchRequest", "0-12", "12+", (
    F("cluster_id", "string", "12+", nullable="12+", tag=0, tagged_versions="12+"),
    F("replica_id", "int32"),
    F("max_wait_ms", "int32"),
    F("min_bytes", "int32"),
    F("max_bytes", "int32", "3+", default=0x7FFFFFFF),
    F("isolation_level", "int8", "4+"),
    F("session_id", "int32", "7+"),
    F("session_epoch", "int32", "7+", default=-1),
    F("topics", "[]", fields=(
        F("topic", "string"),
        F("partitions", "[]", fields=(
            F("partition", "int32"),
            F("current_leader_epoch", "int32", "9+", default=-1),
            F("fetch_offset", "int64"),
            F("last_fetched_epoch", "int32", "12+", default=-1),
            F("log_start_offset", "int64", "5+", default=-1),
            F("partition_max_bytes", "int32"),
        )),
    )),
    F("forgotten_topics_data", "[]", "7+", fields=(
        F("topic", "string", "7+"),
        F("partitions", "[]int32", "7+"),
    )),
    F("rack_id", "string", "11+"),
)), MessageSpec("FetchResponse", "0-12", "12+", (
    F("throttle_time_ms", "int32", "1+"),
    F("error_code", "int16", "7+"),
    F("session_id", "int32", "7+"),
    F("responses", "[]", fields=(
        F("topic", "string"),
        F("partition_responses", "[]", fields=(
            F("partition", "int32"),
            F("error_code", "int16"),
            F("high_watermark", "int64"),
            F("last_stable_offset", "int64", "4+", default=-1),
            F("log_start_offset", "int64", "5+", default=-1),
            F("diverging_epoch", "{}", "12+", tag=0, tagged_versions="12+", fields=(
                F("epoch", "int32", "12+", default=-1),
                F("end_offset", "int64", "12+", default=-1),
            )),
            F("current_leader", "{}", "12+", tag=1, tagged_versions="12+", fields=(
                F("leader_id", "int32", "12+", default=-1),
                F("leader_epoch", "int32", "12+", default=-1),
            )),
            F("snapshot_id", "{}", "12+", tag=2, tagged_versions="12+", fields=(
                F("end_offset", "int64", default=-1),
                F("epoch", "int32", default=-1),
            )),
            F("aborted_transactions", "[]", "4+", nullable="4+", fields=(
                F("producer_id", "int64", "4+"),
                F("first_offset", "int64", "4+"),
            )),
            F("preferred_read_replica", "int32", "11+", default=-1),
            F("record_set", "records", nullable="0+"),
        )),
    )),
)))

INTER_BROKER_APIS: dict[int, ApiSpec] = {
    api.api_key: api for api in (LEADER_AND_ISR, STOP_REPLICA, UPDATE_METADATA, CONTROLLED_SHUTDOWN, ALTER_ISR, FETCH)
}
"""Api key → spec, for every API this table describes."""

IBP_2_8_VERSIONS: dict[int, int] = request_versions(DEFAULT_IBP)
"""The versions a 2.8 controller/broker sends at the default ``inter.broker.protocol.version`` (`protocol.ibp`)."""
