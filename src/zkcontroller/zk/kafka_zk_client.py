"""`KafkaZkClient`: Kafka's ZooKeeper facade for the controller and brokers (``KafkaZkClient.scala``).

Every controller write takes ``expected_epoch_zk_version`` (the fencing token from the election) and runs
inside a multi behind a check of ``/controller_epoch``'s version: a deposed controller writes nothing and
gets `ControllerMovedError`. Pass ``NO_FENCING`` (-1) only for admin-side writes.

Beyond Kafka: partition-state writes and other many-node writes are batched into few multis (under
ZooKeeper's request-size limit) instead of one multi per node, with per-node results kept exact (see
`zkcontroller.zk.fencing`). Reads of many nodes are pipelined, and malformed znodes are reported in a
`BulkRead` rather than aborting the read.

The operation families live in mixins by znode family (brokers and controller, topics and partition
states, admin and notifications); this class only assembles them.
"""

from __future__ import annotations

from zkcontroller.zk.client_admin import AdminOps
from zkcontroller.zk.client_base import BulkRead, Clock
from zkcontroller.zk.client_brokers import BrokerAndEpoch, BrokerOps
from zkcontroller.zk.client_topics import CreatePartitionStatesResult, TopicOps, UpdateLeaderAndIsrResult
from zkcontroller.zk.fencing import NO_FENCING, BatchLimits, BatchStats


class KafkaZkClient(BrokerOps, TopicOps, AdminOps):
    """One broker's (or controller's) view of Kafka's znodes over one `CoordinationSession`.

    Construct with the session, a millisecond ``clock`` (for registration timestamps) and, to generate
    topic ids, a ``rng`` (``random.Random``); ``limits`` bound multi sizes and in-flight requests.
    """


__all__ = [
    "NO_FENCING",
    "BatchLimits",
    "BatchStats",
    "BrokerAndEpoch",
    "BulkRead",
    "Clock",
    "CreatePartitionStatesResult",
    "KafkaZkClient",
    "UpdateLeaderAndIsrResult",
]
