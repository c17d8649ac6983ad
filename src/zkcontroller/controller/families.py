"""Event families: each a slice of Kafka's ``KafkaController`` that owns some events, watches and failover steps.

A family holds the `ControllerCore` and whatever narrow protocols it needs of other families (Kafka's
``DeletionClient`` is the model), never another family's ``self``. `KafkaController` builds its dispatch table
from every family's ``handlers()`` and runs the failover steps of all families in Kafka's order
(``onControllerFailover``):

1. ``register_watches`` — child/node handlers, stale notifications cleared (steps 1–2);
2. ``load_context`` — read the cluster into the context, arming watches (step 3, ``initializeControllerContext``);
   then the core sends UpdateMetadata to every broker and starts the replica and partition state machines;
3. ``on_failover`` — resume what ZooKeeper says is in progress (reassignments, deletions, elections, tasks).

``on_resignation`` runs in reverse family order when this broker stops being controller.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, Protocol

from zkcontroller.controller.core import ControllerCore
from zkcontroller.controller.events import ControllerEvent
from zkcontroller.controller.states import PartitionAndReplica

Handler = Callable[[Any], Awaitable[object]]  # some also return what they did, for direct callers


class EventFamily:
    """Base with no-op steps; a family overrides what it takes part in."""

    def __init__(self, core: ControllerCore) -> None:
        self.core = core

    def handlers(self) -> Mapping[type[ControllerEvent], Handler]:
        return {}

    async def register_watches(self) -> None:
        return None

    async def load_context(self) -> None:
        return None

    async def on_failover(self) -> None:
        return None

    def on_resignation(self) -> None:
        return None

    async def on_session_reconnected(self) -> None:
        """The active controller's connection dropped and came back: every watch it had is disarmed (kazoo's
        rule). Re-arm this family's and catch up on what changed meanwhile, as if each watch had fired."""
        return None


class OfflineReplicasClient(Protocol):
    """What the LeaderAndIsr-response family needs of broker membership: replicas that went offline."""

    async def on_replicas_become_offline(self, replicas: Iterable[PartitionAndReplica]) -> None: ...


class TopicDeletionClient(Protocol):
    """What other families need of topic deletion (Kafka's ``TopicDeletionManager`` as the controller uses it)."""

    def is_topic_queued_up_for_deletion(self, topic: str) -> bool: ...

    async def fail_replica_deletion(self, replicas: set[PartitionAndReplica]) -> None: ...

    async def resume_deletion_for_topics(self, topics: set[str]) -> None: ...

    def mark_topic_ineligible_for_deletion(self, topics: set[str], reason: str) -> None: ...


class ReassignmentResumer(Protocol):
    """What broker membership needs of reassignment: resume those whose target replicas include new brokers."""

    async def maybe_resume_reassignments_on_brokers(self, broker_ids: set[int]) -> None: ...
