"""The unclean-election invariants: an election from outside the ISR happens only where it was enabled, picks
a live out-of-sync replica, and is logged.

An unclean election is recognised at the store, not from the controller's word: a landed partition-state write
whose leader (not -1) is not in the ISR the znode held just before. Every other election (offline from the
ISR, reassignment, preferred, controlled shutdown) and every ISR change keeps the leader inside the previous
ISR, and the conditional write guarantees that the previous stored state is the one the controller elected
from. (An admin-requested unclean election, ``elect --unclean``, needs no config; no scenario makes one.)

- ``unclean-election-only-when-enabled``: the controller decides per topic (`PartitionStateMachine.
  _unclean_enabled_for_topics`): the topic's ``unclean.leader.election.enable`` override as it reads
  ``/config/topics/<t>`` during the election, else its broker-level value (``/config/brokers/<its id>`` over
  ``/config/brokers/<default>`` over the static setting) as it last read those nodes — at failover, or on a
  ``brokers/...`` config-change notification. So the write is accepted when the override was true at some
  point since the partition's previous state write (the controller read it after learning that state), or the
  override was absent then and the broker-level value, as ZooKeeper held it, was true at some point since the
  newest ``brokers/<default>``/``brokers/<id>`` notification the controller had read (a notification it has
  not read yet is fine: its previous value still counts).
- ``unclean-election-picks-live-out-of-sync-replica``: written by the active controller; the new leader is a
  replica that the controller holds online, no member of the previous ISR was online for it, the new ISR
  is exactly ``[leader]`` and the leader epoch went up by one.
- ``unclean-election-logged``: every unclean election is in the event log as a ``leader_election`` record with
  ``clean: false`` (same partition, leader and leader epoch) — unless the controller died or lost its tenure
  before the store's answer reached it. The controller cannot know the offsets it lost (only the brokers'
  logs do; its warning names the previous ISR), so the simulator computes them when the write lands — the
  largest log end offset among the previous ISR's replicas minus the new leader's, at least 0 — and puts them
  in the trace (``unclean-election ... lost_offsets=N log_end_gap=G``) and `UncleanElection`; a negative gap
  means the new leader's log was the longer, divergent one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from zkcontroller.controller.dynamic_config import InvalidDynamicConfigError, parse_unclean_leader_election_enable
from zkcontroller.coordination.api import CheckOp, CreateOp, DeleteOp, Op, SetDataOp
from zkcontroller.model import TopicPartition
from zkcontroller.zk import paths
from zkcontroller.zk.errors import ZnodeDecodeError, require_data
from zkcontroller.zk.znodes import UNCLEAN_LEADER_ELECTION_ENABLE, TopicPartitionStateZNode
from zkcontroller.zk.znodes.config import ConfigEntityChangeNotificationSequenceZNode, ConfigEntityZNode

if TYPE_CHECKING:
    from zkcontroller.sim.host import SimHost
    from zkcontroller.sim.world import SimWorld

UNCLEAN_INVARIANTS = (
    "unclean-election-only-when-enabled",
    "unclean-election-picks-live-out-of-sync-replica",
    "unclean-election-logged",
)

_STATE_PATH = re.compile(r"^/brokers/topics/([^/]+)/partitions/(\d+)/state$")
_TOPIC_CONFIG = f"/config/{paths.ConfigType.TOPIC}/"
_BROKER_CONFIG = f"/config/{paths.ConfigType.BROKER}/"
_BROKER_ENTITY = f"{paths.ConfigType.BROKER}/"


@dataclass
class UncleanElection:
    topic: str
    partition: int
    leader: int
    leader_epoch: int
    previous_isr: tuple[int, ...]
    log_end_gap: int
    """Largest log end offset among the previous ISR's replicas minus the new leader's, when elected: negative
    when the new leader's log is the longer one (it diverged, as a deposed leader's does before it truncates)."""
    writer: Any
    controller_epoch: int
    logged: bool = False

    @property
    def lost_offsets(self) -> int:
        """Offsets the previous ISR had beyond the new leader's log end (never negative)."""
        return max(0, self.log_end_gap)


def _unclean_value(data: bytes | None, path: str) -> bool | None:
    try:
        return parse_unclean_leader_election_enable(ConfigEntityZNode.decode(data, path))
    except (InvalidDynamicConfigError, ZnodeDecodeError):
        return None  # the controller would not use an invalid value either; the workload never writes one


class UncleanInvariants:
    def __init__(self, world: SimWorld) -> None:
        self.world = world
        self.elections: list[UncleanElection] = []
        self._configs: dict[str, list[tuple[int, bool | None]]] = {}
        """Config znode path → (zxid, its unclean.leader.election.enable: None if unset or gone), in order."""
        self._states: dict[str, tuple[tuple[int, ...], int, int]] = {}
        """Partition-state path → (ISR, leader epoch, zxid) of its last landed write."""
        self._broker_notifications: list[tuple[str, str, int]] = []
        """(sequence number, broker entity, zxid) of every ``brokers/...`` config-change notification."""
        self._pending: dict[tuple[str, int, int], UncleanElection] = {}

    # ------------------------------------------------------------------ store writes

    def on_landed(self, host: SimHost | None, written: Sequence[Op], zxid: int) -> None:
        for op in written:
            path = op.path
            if path.startswith("/config/"):
                self._config_write(op, zxid)
                continue
            match = _STATE_PATH.match(path)
            if match is None:
                continue
            if isinstance(op, DeleteOp):
                self._states.pop(path, None)
                continue
            if isinstance(op, CheckOp):
                continue
            lai = TopicPartitionStateZNode.decode(require_data(op.data, path), path, 0).leader_and_isr
            previous = self._states.get(path)
            self._states[path] = (lai.isr, lai.leader_epoch, zxid)
            if isinstance(op, SetDataOp) and previous is not None and lai.leader >= 0 \
                    and lai.leader not in previous[0]:
                self._unclean(host, TopicPartition(match.group(1), int(match.group(2))), lai, previous, zxid)

    def _config_write(self, op: Op, zxid: int) -> None:
        path = op.path
        if isinstance(op, CheckOp):
            return
        if path.startswith((_TOPIC_CONFIG, _BROKER_CONFIG)):
            value = None if isinstance(op, DeleteOp) else _unclean_value(op.data, path)
            self._configs.setdefault(path, []).append((zxid, value))
        elif path.startswith(paths.config_change_path()) and isinstance(op, CreateOp):
            entity = ConfigEntityChangeNotificationSequenceZNode.decode(require_data(op.data, path), path)
            if entity.startswith(_BROKER_ENTITY):
                newest = max(self.world.zk.children(paths.CONFIG_CHANGES))  # the one just created
                sequence = paths.sequence_number(newest, paths.CONFIG_CHANGE_PREFIX)
                self._broker_notifications.append((sequence, entity[len(_BROKER_ENTITY):], zxid))

    def _values(self, path: str, low: int, high: int) -> list[bool | None]:
        """The config's value at ``low`` and every value it took in (low, high]."""
        at_low: bool | None = None
        later: list[bool | None] = []
        for zxid, value in self._configs.get(path, ()):
            if zxid <= low:
                at_low = value
            elif zxid <= high:
                later.append(value)
        return [at_low, *later]

    def _broker_level_enabled(self, controller: Any, low: int, high: int) -> bool:
        """The controller's broker-level value, as ZooKeeper held it, was true at some zxid in [low, high]."""
        per_path = paths.broker_config_path(str(controller.core.controller_id))
        default_path = paths.broker_config_path(paths.DEFAULT_ENTITY)
        static = self.world.controller_config(controller.core.controller_id).unclean_leader_election_enable
        points = sorted({low, *(z for p in (per_path, default_path) for z, _ in self._configs.get(p, ())
                                if low < z <= high)})
        for point in points:
            per = self._values(per_path, point, point)[0]
            default = self._values(default_path, point, point)[0]
            effective = per if per is not None else default if default is not None else static
            if effective:
                return True
        return False

    def _last_broker_read(self, controller: Any) -> int:
        """The zxid of the newest ``brokers/<default>``/``brokers/<its id>`` notification the controller has
        read (it re-read the broker configs after it), or 0."""
        read_up_to = controller.unclean_election.last_sequence_number
        mine = {paths.DEFAULT_ENTITY, str(controller.core.controller_id)}
        zxids = [z for seq, entity, z in self._broker_notifications if seq <= read_up_to and entity in mine]
        return max(zxids, default=0)

    def _unclean(self, host: SimHost | None, tp: TopicPartition, lai: Any,
                 previous: tuple[tuple[int, ...], int, int], zxid: int) -> None:
        checker = self.world.checker
        old_isr, old_epoch, previous_zxid = previous
        controller = None if host is None else host.controller
        where = f"{tp}: leader {lai.leader} (epoch {lai.leader_epoch}) from outside ISR {list(old_isr)}"
        if controller is None or not controller.is_active:
            checker.violate("unclean-election-picks-live-out-of-sync-replica", f"{where} not written by the "
                                                                               "active controller")
            return
        context = controller.context
        replicas = checker.assignment(tp.topic).get(tp.partition, ())
        if lai.leader not in replicas or not context.is_replica_online(lai.leader, tp):
            checker.violate("unclean-election-picks-live-out-of-sync-replica",
                            f"{where}: not a replica the controller holds online (replicas {list(replicas)})")
        elif any(context.is_replica_online(r, tp) for r in old_isr):
            checker.violate("unclean-election-picks-live-out-of-sync-replica",
                            f"{where} while an ISR member was online")
        elif tuple(lai.isr) != (lai.leader,) or lai.leader_epoch != old_epoch + 1:
            checker.violate("unclean-election-picks-live-out-of-sync-replica",
                            f"{where}: new ISR {list(lai.isr)}, leader epoch {old_epoch} -> {lai.leader_epoch}")
        override = self._values(paths.topic_config_path(tp.topic), previous_zxid, zxid)
        if True not in override and not (
                None in override and self._broker_level_enabled(controller, self._last_broker_read(controller), zxid)):
            checker.violate("unclean-election-only-when-enabled",
                            f"{where} while unclean election was disabled for {tp.topic} (topic override "
                            f"{override}, broker level off)")
        election = UncleanElection(tp.topic, tp.partition, lai.leader, lai.leader_epoch, tuple(old_isr),
                                   self._log_end_gap(tp, old_isr, lai.leader), host.process if host else None,
                                   context.epoch)
        self.elections.append(election)
        self._pending[(tp.topic, tp.partition, lai.leader_epoch)] = election
        self.world.record("unclean-election", f"{tp} leader={lai.leader} epoch={lai.leader_epoch} "
                                              f"previous_isr={list(old_isr)} lost_offsets={election.lost_offsets} "
                                              f"log_end_gap={election.log_end_gap}")

    def _log_end(self, broker_id: int, tp: TopicPartition) -> int:
        server = self.world.host(broker_id).server
        manager = None if server is None else server.replica_manager
        if manager is None:
            return 0
        hosted = manager.log_end_offset(tp)  # cheap; `log_offsets` builds every partition's entry
        return hosted if hosted is not None else manager.log_offsets().get(tp, (0, 0))[0]

    def _log_end_gap(self, tp: TopicPartition, old_isr: tuple[int, ...], leader: int) -> int:
        return max((self._log_end(b, tp) for b in old_isr), default=0) - self._log_end(leader, tp)

    # ------------------------------------------------------------------ the event log

    def on_event(self, line: str) -> None:
        if not self._pending or '"leader_election"' not in line:
            return
        record = json.loads(line)
        key = (record.get("topic"), record.get("partition"), record.get("leader_epoch"))
        election = self._pending.get(key)
        if record.get("type") != "leader_election" or election is None or record.get("leader") != election.leader:
            return
        del self._pending[key]
        election.logged = True
        if record.get("clean") is not False:
            self.world.checker.violate("unclean-election-logged", f"{election.topic}-{election.partition}: the "
                                       f"election of {election.leader} (epoch {election.leader_epoch}) from outside "
                                       f"ISR {list(election.previous_isr)} was logged as clean")

    def finish(self) -> None:
        """After the run: an unclean election whose controller is still running, active and in the same epoch
        must have been logged."""
        if self.world.checker.violations:
            return
        for election in list(self._pending.values()):
            host = self.world.host_of(election.writer)
            controller = None if host is None else host.controller
            if host is None or host.state != "running" or controller is None or not controller.is_active \
                    or controller.context.epoch != election.controller_epoch:
                continue
            self.world.checker.violate("unclean-election-logged",
                                       f"{election.topic}-{election.partition}: the election of {election.leader} "
                                       f"(epoch {election.leader_epoch}) is not in the event log")


def read_unclean_as_enabled(path: str, data: bytes) -> bytes:
    """The ``unclean-read-as-enabled`` mutation, at the store seam: a broker reading a topic's config in a batch
    (the partition state machine's election does) sees ``unclean.leader.election.enable=true`` whatever is
    stored, so the controller elects from outside the ISR where unclean election is disabled."""
    if not path.startswith(_TOPIC_CONFIG):
        return data
    try:
        configs = ConfigEntityZNode.decode(data, path)
    except ZnodeDecodeError:
        return data
    return ConfigEntityZNode.encode({**configs, UNCLEAN_LEADER_ELECTION_ENABLE: "true"})
