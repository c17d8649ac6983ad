"""The chaos soak's invariants over plain snapshots (ZooKeeper's view, each broker's Metadata answer, ListOffsets
readings), so a test can feed a planted violation and see it caught.

Two kinds: *safety* checks hold at every snapshot (epochs never go backwards, one leader per leader epoch, one
controller per controller epoch, leader ∈ ISR ⊆ replicas, an acknowledged offset is never handed out twice and the
high watermark never goes backwards); *convergence* checks (`SoakChecker.unsettled`) must come true within a bound
after each fault (one controller, live leaders, brokers' metadata agreeing with ZooKeeper, full ISRs after heal).
The simulator's invariants (`zkcontroller.sim.invariants`) judge individual store writes of an in-process world and
may not be imported here (the cluster layer never depends on the simulator), so these are written anew, small.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from zkcontroller.model import TopicPartition


@dataclass(frozen=True)
class PartitionState:
    """One partition as ZooKeeper holds it: the topic znode's full replica set, the state znode's leadership."""

    replicas: tuple[int, ...]
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]


@dataclass(frozen=True)
class ZkSnapshot:
    """What the soak reads from ZooKeeper at one moment."""

    controller: int | None
    controller_epoch: int | None
    registered: frozenset[int]
    partitions: Mapping[TopicPartition, PartitionState]


@dataclass(frozen=True)
class BrokerPartitionView:
    """One partition as a broker's Metadata answer gives it."""

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]


@dataclass(frozen=True)
class Violation:
    invariant: str
    detail: str

    def __str__(self) -> str:
        return f"{self.invariant}: {self.detail}"


@dataclass
class SoakChecker:
    """The history the safety checks compare against: highest epochs and watermarks seen, who led each epoch."""

    max_controller_epoch: int = -1
    controller_of_epoch: dict[int, int] = field(default_factory=dict)
    max_leader_epoch: dict[TopicPartition, int] = field(default_factory=dict)
    leader_of_epoch: dict[tuple[TopicPartition, int], int] = field(default_factory=dict)
    hw_floor: dict[TopicPartition, int] = field(default_factory=dict)
    """Per partition: the highest watermark a leader answered, or an acknowledged offset + 1 if higher."""
    acked: dict[TopicPartition, set[int]] = field(default_factory=dict)
    checks_passed: int = 0

    # ------------------------------------------------------------------ safety, at every snapshot

    def observe(self, snap: ZkSnapshot) -> list[Violation]:
        """Safety checks of one ZooKeeper snapshot against the history; the history then takes it in."""
        found: list[Violation] = []
        if snap.controller_epoch is not None:
            if snap.controller_epoch < self.max_controller_epoch:
                found.append(Violation("controller-epoch-monotonic", f"/controller_epoch went back from "
                                       f"{self.max_controller_epoch} to {snap.controller_epoch}"))
            self.max_controller_epoch = max(self.max_controller_epoch, snap.controller_epoch)
            if snap.controller is not None and snap.controller_epoch == self.max_controller_epoch:
                # /controller and /controller_epoch are two reads: only a controller seen with the highest epoch
                # is taken as that epoch's owner (a read between an election's two writes could pair them wrong)
                owner = self.controller_of_epoch.setdefault(snap.controller_epoch, snap.controller)
                if owner != snap.controller:
                    found.append(Violation("one-controller-per-epoch", f"controller epoch {snap.controller_epoch} "
                                           f"held by broker {owner} and later by broker {snap.controller}"))
        for tp, p in sorted(snap.partitions.items()):
            found += self._partition(tp, p)
        if not found:
            self.checks_passed += 1
        return found

    def _partition(self, tp: TopicPartition, p: PartitionState) -> list[Violation]:
        found = []
        if not set(p.isr) <= set(p.replicas):
            found.append(Violation("isr-in-replicas",
                                   f"{tp}: ISR {list(p.isr)} not within replicas {list(p.replicas)}"))
        if p.leader != -1 and p.leader not in p.isr:
            found.append(Violation("leader-in-isr", f"{tp}: leader {p.leader} not in ISR {list(p.isr)}"))
        if p.leader != -1 and p.leader not in p.replicas:
            found.append(Violation("leader-in-replicas",
                                   f"{tp}: leader {p.leader} not in replicas {list(p.replicas)}"))
        before = self.max_leader_epoch.get(tp, -1)
        if p.leader_epoch < before:
            found.append(Violation("leader-epoch-monotonic", f"{tp}: leader epoch went back from {before} to "
                                   f"{p.leader_epoch}"))
        self.max_leader_epoch[tp] = max(before, p.leader_epoch)
        if p.leader != -1:
            owner = self.leader_of_epoch.setdefault((tp, p.leader_epoch), p.leader)
            if owner != p.leader:
                found.append(Violation("one-leader-per-epoch", f"{tp}: leader epoch {p.leader_epoch} led by broker "
                                       f"{owner} and by broker {p.leader}"))
        return found

    def acknowledged(self, tp: TopicPartition, offset: int) -> list[Violation]:
        """A produce acknowledged (acks=all) at ``offset``: committed, so the watermark is past it for good, and no
        other acknowledged record may get the same offset (that one would have been truncated away)."""
        seen = self.acked.setdefault(tp, set())
        if offset in seen:
            return [Violation("acked-offset-unique", f"{tp}: offset {offset} acknowledged twice (an acknowledged "
                              "record was truncated and its offset reused)")]
        seen.add(offset)
        self.hw_floor[tp] = max(self.hw_floor.get(tp, 0), offset + 1)
        return []

    def floors(self) -> dict[TopicPartition, int]:
        """The watermark floors now: take them before asking ListOffsets, compare its answers with `watermarks`."""
        return dict(self.hw_floor)

    def watermarks(self, floors: Mapping[TopicPartition, int], answers: Mapping[TopicPartition, tuple[int, int]]
                   ) -> list[Violation]:
        """High watermarks ``answers`` (tp → (leader asked, offset)) against ``floors`` taken before asking."""
        found = []
        for tp, (leader, hw) in sorted(answers.items()):
            floor = floors.get(tp, 0)
            if hw < floor:
                found.append(Violation("high-watermark-monotonic", f"{tp}: leader {leader} answered high watermark "
                                       f"{hw}, below {floor} (a watermark seen or an acknowledged offset + 1)"))
            self.hw_floor[tp] = max(self.hw_floor.get(tp, 0), hw)
        return found

    @staticmethod
    def appended_once(handed: Mapping[TopicPartition, int], answers: Mapping[TopicPartition, tuple[int, int]]
                      ) -> list[Violation]:
        """High watermarks ``answers`` against ``handed``, the records ever handed to the producer per partition
        (read after the answers). The soak's producer is the only writer of its topics, created empty, and nothing
        is compacted or deleted, so a log holding more records than were ever sent appended some twice: the
        idempotent producer's retry of a batch the new leader already had (an offsets-only log cannot show which)."""
        return [Violation("no-duplicate-appends", f"{tp}: leader {leader} answered high watermark {hw}, above the "
                          f"{handed.get(tp, 0)} records ever sent to it (a retried batch was appended twice)")
                for tp, (leader, hw) in sorted(answers.items()) if hw > handed.get(tp, 0)]

    # ------------------------------------------------------------------ convergence, within a bound

    @staticmethod
    def unsettled(snap: ZkSnapshot, running: Iterable[int], active_controllers: Mapping[int, bool],
                  views: Mapping[int, Mapping[TopicPartition, BrokerPartitionView] | str],
                  healed: bool = False) -> list[Violation]:
        """What is not yet as it must end up: ``running`` are the brokers neither stopped nor paused,
        ``active_controllers`` their ActiveControllerCount (broker → is active; a broker not asked is absent),
        ``views`` their Metadata answers (or why there is none). ``healed``: every broker runs, so every ISR must
        hold every replica."""
        running = set(running)
        found = []
        if snap.controller is None:
            found.append(Violation("one-controller", "no /controller"))
        elif snap.controller not in snap.registered:
            found.append(Violation("one-controller", f"/controller names broker {snap.controller}, not registered "
                                   f"(registered: {sorted(snap.registered)})"))
        active = sorted(b for b, is_active in active_controllers.items() if is_active)
        if active != ([snap.controller] if snap.controller in running else []):
            found.append(Violation("one-controller", f"brokers {active} report themselves active controller; "
                                   f"/controller is {snap.controller}"))
        for tp, p in sorted(snap.partitions.items()):
            live_isr = [b for b in p.isr if b in snap.registered]
            all_live = all(b in snap.registered for b in p.replicas)
            if (all_live or live_isr) and p.leader not in snap.registered:
                found.append(Violation("live-leader", f"{tp}: leader {p.leader} is not a live broker though "
                                       f"replicas {list(p.replicas)} / ISR {list(p.isr)} have live members "
                                       f"(live: {sorted(snap.registered)})"))
            if healed and set(p.isr) != set(p.replicas):
                found.append(Violation("full-isr-after-heal", f"{tp}: ISR {list(p.isr)} lacks some of replicas "
                                       f"{list(p.replicas)}"))
        for broker in sorted(running & snap.registered):
            view = views.get(broker, "not asked")
            if isinstance(view, str):
                found.append(Violation("metadata-agrees", f"broker {broker}: no Metadata answer ({view})"))
                continue
            for tp, p in sorted(snap.partitions.items()):
                got = view.get(tp)
                want = BrokerPartitionView(p.leader, p.leader_epoch, tuple(sorted(p.isr)))
                if got is None or (got.leader, got.leader_epoch, tuple(sorted(got.isr))) != \
                        (want.leader, want.leader_epoch, want.isr):
                    found.append(Violation("metadata-agrees", f"broker {broker} says {tp} is {got}, ZooKeeper says "
                                           f"{want}"))
        return found
