"""The named safety invariants, checked as the simulation runs, and the split-brain figures.

Where each is checked:

- ``one-controller-per-epoch`` — after every loop step: no two brokers act as controller with the same epoch,
  now or ever (the first broker seen active in an epoch owns it).
- ``no-stale-controller-write`` — at every landed store write to a controller-owned znode (partition state,
  admin paths, the deletion of notifications): the writer's controller epoch is the one in ``/controller_epoch``.
  The one exception is Kafka's own: before IBP 2.7-IV2 a leader writes its partitions' ISR changes itself
  (unfenced, conditional on the zkVersion); such a write must name the writer as leader, and at a later IBP
  a broker's partition-state write is judged as a controller write (and fails).
- ``epochs-monotonic`` — at every landed write: ``/controller_epoch`` and each partition's leader epoch (and the
  controller epoch recorded in its state) never decrease.
- ``leader-in-isr-in-replicas`` — at every landed partition-state write: leader ∈ ISR ⊆ replicas (leader -1
  allowed). It holds under unclean elections too (the ISR becomes ``[leader]``); those have their own
  invariants in `invariants_unclean`, which ``unclean-election-under-faults`` exercises.
- ``broker-applies-no-stale-request`` — at every delivery: a broker never applies a control request whose
  controller epoch is older than one it already applied, nor a partition leader epoch that does not increase.
- ``broker-rejects-stale-broker-epoch`` — at every delivery: a request carrying a broker epoch older than the
  broker's current registration is refused with STALE_BROKER_EPOCH.

The ``no-broker-epoch-check`` and ``no-isr-expansion`` mutations act here too (they rewrite what a broker sees at
the delivery seam); liveness after heal, ISRs included, is checked in `liveness` and `isr_liveness`.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from zkcontroller.coordination.api import CreateOp, DeleteOp, Op, SetDataOp
from zkcontroller.protocol.control_requests import (
    UNKNOWN_BROKER_EPOCH,
    ControlRequest,
    ControlResponse,
    Errors,
    LeaderAndIsrRequest,
)
from zkcontroller.protocol.inter_broker import AlterIsrRequest
from zkcontroller.protocol.transport import RequestHandler
from zkcontroller.sim.invariants_admin import AdminInvariants
from zkcontroller.sim.invariants_idempotence import IdempotenceInvariants
from zkcontroller.sim.invariants_unclean import UncleanInvariants
from zkcontroller.sim.isr_liveness import drop_isr_expansion
from zkcontroller.zk import paths
from zkcontroller.zk.errors import require_data
from zkcontroller.zk.znodes import TopicPartitionStateZNode, TopicZNode

if TYPE_CHECKING:
    from zkcontroller.sim.network import NetworkHost
    from zkcontroller.sim.world import SimWorld

INVARIANTS = (
    "one-controller-per-epoch",
    "no-stale-controller-write",
    "epochs-monotonic",
    "leader-in-isr-in-replicas",
    "broker-applies-no-stale-request",
    "broker-rejects-stale-broker-epoch",
)
LIVENESS = "liveness-after-heal"

_STATE_PATH = re.compile(r"^/brokers/topics/([^/]+)/partitions/(\d+)/state$")
_CONTROLLER_OWNED = re.compile(
    r"^/brokers/topics/[^/]+(/partitions(/.*)?)?$"
    r"|^/admin/(delete_topics/.+|reassign_partitions|preferred_replica_election)$")
"""Znodes only the controller writes among brokers (a broker's start-up creates their parents, not these)."""
_NOTIFICATION = re.compile(r"^/(isr_change_notification|log_dir_event_notification)/.+$")
"""Brokers create these (a failed log dir, ISR changes before 2.7-IV2); only the controller deletes them."""


def _controller_owned(op: Op) -> bool:
    return bool(_CONTROLLER_OWNED.match(op.path)) or (isinstance(op, DeleteOp) and bool(_NOTIFICATION.match(op.path)))


@dataclass(frozen=True)
class Violation:
    invariant: str
    step: int
    time_ms: int
    detail: str


@dataclass
class SplitBrainStats:
    """How long two brokers both believed they were controller, and what the deposed one managed to do."""

    window_ms: int = 0
    stale_writes_attempted: int = 0
    stale_writes_landed: int = 0
    stale_requests_delivered: int = 0
    stale_requests_refused: int = 0


@dataclass
class _BrokerView:
    """What one broker process has applied (per process: a restarted broker starts afresh)."""

    controller_epoch: int = 0
    leader_epochs: dict[Any, int] = field(default_factory=dict)


class InvariantChecker:
    def __init__(self, world: SimWorld) -> None:
        self.world = world
        self.violations: list[Violation] = []
        self.checks = 0
        self.split_brain = SplitBrainStats()
        self.no_broker_epoch_check = False
        self.no_isr_expansion = False
        self.admin = AdminInvariants(world)
        """Deletion and reassignment invariants (`invariants_admin`)."""
        self.unclean = UncleanInvariants(world)
        """Unclean-election invariants (`invariants_unclean`)."""
        self.idempotence = IdempotenceInvariants(self.violate)
        """Idempotent-producer invariants (`invariants_idempotence`), fed by `idempotent_producer`."""
        self.delivery_log: list[tuple[int, Any, Any, int | None]] | None = None
        """When a list: every delivery as (broker id, request, response, broker's controller epoch before)."""
        self._epoch_owner: dict[int, int] = {}
        self._controller_epoch = 0
        self._partition_epochs: dict[str, tuple[int, int]] = {}
        self._views: dict[Any, _BrokerView] = {}
        """Keyed by the broker process (identity), looked up only, never iterated."""
        self._both_since: float | None = None
        self._assignments: dict[str, tuple[tuple[str, int], dict[int, tuple[int, ...]]]] = {}

    def violate(self, invariant: str, detail: str) -> None:
        world = self.world
        self.violations.append(Violation(invariant, world.steps, world.now_ms(), detail))
        world.record("VIOLATION", f"{invariant}: {detail}")
        world.stop_now()

    # ------------------------------------------------------------------ after every loop step

    def check_step(self) -> None:
        self.checks += 1
        active: list[tuple[int, int]] = []
        for host in self.world.hosts:
            controller = host.controller
            if controller is not None and host.state in ("running", "paused", "stopping") and controller.is_active:
                active.append((controller.context.epoch, host.broker_id))
        for epoch, broker_id in active:
            owner = self._epoch_owner.setdefault(epoch, broker_id)
            if owner != broker_id:
                self.violate("one-controller-per-epoch",
                             f"brokers {owner} and {broker_id} both acted as controller in epoch {epoch}")
                self._epoch_owner[epoch] = broker_id
        now = self.world.loop_time()
        if len(active) >= 2:
            if self._both_since is None:
                self._both_since = now
        elif self._both_since is not None:
            self.split_brain.window_ms += round((now - self._both_since) * 1000)
            self._both_since = None

    def finish(self) -> None:
        if self._both_since is not None:
            self.split_brain.window_ms += round((self.world.loop_time() - self._both_since) * 1000)
            self._both_since = None
        self.unclean.finish()

    # ------------------------------------------------------------------ store writes

    def on_write(self, owner: Any, ops: Sequence[Op], landed: bool, fenced: bool) -> None:
        world = self.world
        written = [op for op in ops if isinstance(op, CreateOp | SetDataOp | DeleteOp)]
        if landed:
            world.record("zk-write", f"{owner.name} zxid={world.zk.server.last_zxid} "
                                     f"{','.join(sorted({op.path for op in written}))[:200]}")
        host = world.host_of(owner)
        if host is not None and any(_controller_owned(op) for op in written) \
                and not self._leaders_own_isr_write(host, written, fenced):
            self._check_controller_write(host.controller, owner, landed)
            if landed and world.pause_on_write is owner:
                world.pause_on_write = None
                world.pause(host.broker_id)
        if not landed:
            return
        self.admin.on_landed(written)
        self.unclean.on_landed(host, written, world.zk.server.last_zxid)
        for op in written:
            if op.path == paths.CONTROLLER_EPOCH and isinstance(op, SetDataOp | CreateOp):
                self._check_controller_epoch(int(require_data(op.data, op.path)))
            elif isinstance(op, DeleteOp):
                self._partition_epochs.pop(op.path, None)
            else:
                match = _STATE_PATH.match(op.path)
                if match is not None:
                    self._check_partition_state(op.path, require_data(op.data, op.path), match.group(1))

    @staticmethod
    def _leaders_own_isr_write(host: Any, written: Sequence[Op], fenced: bool) -> bool:
        """Before IBP 2.7-IV2 a leader writes its own partitions' states (Kafka's ``ZkIsrManager``), unfenced."""
        server = host.server
        if fenced or server is None or server.config.replication.uses_alter_isr or not written:
            return False
        for op in written:
            if not (isinstance(op, SetDataOp) and _STATE_PATH.match(op.path)):
                return False
            state = TopicPartitionStateZNode.decode(require_data(op.data, op.path), op.path, 0)
            if state.leader_and_isr.leader != host.broker_id:
                return False
        return True

    def _check_controller_write(self, controller: Any, owner: Any, landed: bool) -> None:
        store_epoch = self.world.zk.controller_epoch()
        epoch = 0 if controller is None else controller.context.epoch
        if epoch == store_epoch and controller is not None and controller.is_active:
            return
        self.split_brain.stale_writes_attempted += 1
        if landed:
            self.split_brain.stale_writes_landed += 1
            self.violate("no-stale-controller-write",
                         f"{owner.name} wrote as controller with epoch {epoch} while /controller_epoch is "
                         f"{store_epoch}")

    def _check_controller_epoch(self, epoch: int) -> None:
        if epoch < self._controller_epoch:
            self.violate("epochs-monotonic", f"/controller_epoch went from {self._controller_epoch} to {epoch}")
        self._controller_epoch = max(self._controller_epoch, epoch)

    def _check_partition_state(self, path: str, data: bytes, topic: str) -> None:
        state = TopicPartitionStateZNode.decode(data, path, 0)
        lai = state.leader_and_isr
        before = self._partition_epochs.get(path, (-1, -1))
        now = (lai.leader_epoch, state.controller_epoch)
        if now[0] < before[0] or now[1] < before[1]:
            self.violate("epochs-monotonic", f"{path}: (leader epoch, controller epoch) went from {before} to {now}")
        self._partition_epochs[path] = (max(now[0], before[0]), max(now[1], before[1]))
        replicas = self.assignment(topic).get(int(path.rsplit("/", 2)[-2]))
        isr = set(lai.isr)
        if lai.leader >= 0 and lai.leader not in isr:
            self.violate("leader-in-isr-in-replicas", f"{path}: leader {lai.leader} not in ISR {sorted(isr)}")
        if replicas is not None and not isr <= set(replicas):
            self.violate("leader-in-isr-in-replicas", f"{path}: ISR {sorted(isr)} not within replicas "
                                                      f"{sorted(replicas)}")

    def assignment(self, topic: str) -> dict[int, tuple[int, ...]]:
        """The topic's assignment as the store holds it (decoded once per version of the znode)."""
        found = self.world.zk.read(paths.topic_path(topic))
        if found is None:
            return {}
        key = (topic, found[1].mzxid)
        cached = self._assignments.get(topic)
        if cached is not None and cached[0] == key:
            return cached[1]
        decoded = TopicZNode.decode(found[0], paths.topic_path(topic))
        replicas = {tp.partition: tuple(ra.replicas) for tp, ra in decoded.assignment.items()}
        self._assignments[topic] = (key, replicas)
        return replicas

    # ------------------------------------------------------------------ control requests reaching brokers

    def deliver(self, host: NetworkHost, handler: RequestHandler, request: Any) -> Any:
        world = self.world
        sim_host = world.host_of(host)
        plane = None if sim_host is None else sim_host.control_plane
        seen = request
        if self.no_broker_epoch_check and plane is not None and isinstance(request, ControlRequest):
            seen = dataclasses.replace(request, controller_epoch=max(request.controller_epoch,
                                                                     plane.controller_epoch),
                                       broker_epoch=UNKNOWN_BROKER_EPOCH)
        if self.no_isr_expansion and isinstance(request, AlterIsrRequest):
            seen = drop_isr_expansion(world, request)
        before = self._leader_epochs(plane, request)
        epoch_seen = None if plane is None else plane.controller_epoch
        response = handler(seen)
        if self.delivery_log is not None and sim_host is not None:
            self.delivery_log.append((sim_host.broker_id, request, response, epoch_seen))
        if isinstance(request, ControlRequest) and isinstance(response, ControlResponse) and plane is not None:
            self._check_delivery(host, plane, request, response, before)
        return response

    @staticmethod
    def _leader_epochs(plane: Any, request: Any) -> dict[Any, int]:
        if plane is None or not isinstance(request, LeaderAndIsrRequest):
            return {}
        out = {}
        for state in request.partition_states:
            hosted = plane.partition(state.topic_partition)
            out[state.topic_partition] = -1 if hosted is None else hosted.leader_epoch
        return out

    def _check_delivery(self, host: Any, plane: Any, request: ControlRequest, response: ControlResponse,
                        before: dict[Any, int]) -> None:
        world = self.world
        kind = type(request).__name__
        world.record("deliver", f"{request.controller_id}->{host.broker_id} {kind} c_epoch={request.controller_epoch}"
                                f" b_epoch={request.broker_epoch} -> {response.error.name}")
        refused = response.error is not Errors.NONE or (
            bool(response.partition_errors) and all(e is not Errors.NONE for _, e in response.partition_errors))
        if request.controller_epoch < world.zk.controller_epoch():
            self.split_brain.stale_requests_delivered += 1
            self.split_brain.stale_requests_refused += int(refused)
        if (request.broker_epoch != UNKNOWN_BROKER_EPOCH and request.broker_epoch < plane.broker_epoch
                and response.error is not Errors.STALE_BROKER_EPOCH):
            self.violate("broker-rejects-stale-broker-epoch",
                         f"broker {host.broker_id} (epoch {plane.broker_epoch}) accepted {kind} carrying broker "
                         f"epoch {request.broker_epoch}")
        view = self._views.setdefault(host, _BrokerView())
        if response.error is not Errors.NONE:
            return
        if request.controller_epoch < view.controller_epoch:
            self.violate("broker-applies-no-stale-request",
                         f"broker {host.broker_id} applied {kind} from controller {request.controller_id} epoch "
                         f"{request.controller_epoch} after one of epoch {view.controller_epoch}")
        view.controller_epoch = max(view.controller_epoch, request.controller_epoch)
        for tp, old in sorted(before.items()):
            hosted = plane.partition(tp)
            new = -1 if hosted is None else hosted.leader_epoch
            if new != old and new <= old:
                self.violate("broker-applies-no-stale-request",
                             f"broker {host.broker_id} moved {tp} from leader epoch {old} to {new}")

