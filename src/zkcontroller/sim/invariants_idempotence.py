"""The idempotent-producer invariants: what brokers acknowledged to an idempotent producer is each batch once, at
one place, in sequence order.

An *acknowledgement* is a successful answer the broker's Produce path (`broker.produce.produce`) computed for one of
the producer's batches — delivered to the producer or lost on the way (the leader died before its answer arrived):
either way the broker said "this batch is at these offsets", and a retry must not make it say otherwise. A
duplicate's answer (the broker found the batch among the producer's last five and appended nothing) counts too.
The simulator's idempotent producer (`idempotent_producer`) reports each one here.

- ``idempotent-retry-same-offsets``: a sequence range acknowledged twice (a retry after a lost answer) was
  acknowledged at the same offsets both times.
- ``idempotent-acks-disjoint``: no two different acknowledged batches of the producer overlap in offsets.
- ``idempotent-sequence-order-is-offset-order``: per partition and producer id, a batch with higher sequences sits
  at higher offsets.
- ``idempotent-acks-adjacent``: the producer is its topic's only writer, so every offset of the topic holds one of
  its batches, each once: two batches of consecutive sequences are acknowledged at consecutive offsets. Offsets
  between them hold a batch written twice (the retry of a batch the new leader already had, appended again) or one
  never acknowledged.
- ``idempotent-acks-gapless`` (when the producer has drained, `check_gapless`): the acknowledged sequences of each
  partition and producer id have no hole between two acknowledged batches (a hole is a batch the leader skipped:
  a later sequence accepted without the earlier one).
- ``idempotent-next-sequence-accepted``: the leader never refuses as OUT_OF_ORDER_SEQUENCE_NUMBER the batch right
  after the producer's highest acknowledged sequence (the batch holding it is committed, and a correct leader's
  state follows it, so that refusal means its producer state lost some, or took a later batch without this one).
  Only ZooKeeper's leader at the leader epoch it holds counts: a deposed leader not yet told knows nothing of what
  its successor acknowledged (the producer's `_deposed`).
- ``produce-path-raised``: the Produce path of a live broker (its process alive, the broker serving) never raises
  anything but the drop of a stopping broker's purgatory: any other exception is a bug in the broker's code,
  which Kafka's request handler would answer UNKNOWN_SERVER_ERROR (and the producer would retry), so it is
  reported rather than hidden among the failures a crash or a stop causes.
- ``init-producer-id-raised``: likewise for InitProducerId on a live broker, except the failures of its ZooKeeper
  session (connection loss, session expiry, operation timeout, a session moved, no client while the broker
  restarts) that the simulator injects: the id block's claim then fails as Kafka's would.

Sequence numbers never wrap in a run (2^31 of them), so they are compared as plain integers.
"""

from __future__ import annotations

import bisect
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

IDEMPOTENCE_INVARIANTS = (
    "idempotent-retry-same-offsets",
    "idempotent-acks-disjoint",
    "idempotent-sequence-order-is-offset-order",
    "idempotent-acks-adjacent",
    "idempotent-acks-gapless",
    "idempotent-next-sequence-accepted",
    "produce-path-raised",
    "init-producer-id-raised",
)


@dataclass(frozen=True, slots=True)
class Ack:
    """One broker's successful answer for one batch."""

    producer_id: int
    topic: str
    partition: int
    base_sequence: int
    count: int
    base_offset: int
    broker_id: int
    delivered: bool = True
    """False when the answer was computed but never reached the producer (its connection closed first)."""

    @property
    def last_sequence(self) -> int:
        return self.base_sequence + self.count - 1

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.count - 1

    def where(self) -> str:
        return (f"sequences {self.base_sequence}..{self.last_sequence} at offsets {self.base_offset}.."
                f"{self.last_offset} (broker {self.broker_id}{'' if self.delivered else ', answer lost'})")


@dataclass
class _Stream:
    """One producer id's acknowledged batches on one partition, by base sequence."""

    sequences: list[int] = field(default_factory=list)
    acks: dict[int, Ack] = field(default_factory=dict)


class IdempotenceInvariants:
    def __init__(self, violate: Callable[[str, str], None], *, sole_writer: bool = True) -> None:
        self.violate = violate
        self.sole_writer = sole_writer
        """The producer is its topics' only writer (the adjacency invariant assumes it)."""
        self._streams: dict[tuple[int, str, int], _Stream] = {}
        self._offsets: dict[tuple[str, int], list[tuple[int, int, Ack]]] = {}
        """Per partition: (base offset, last offset, ack) of every distinct acknowledged batch, sorted."""
        self.acks = 0
        """Every acknowledgement seen, repeats included."""
        self.lost_acks = 0
        """Acknowledgements the broker computed that never reached the producer."""

    def on_ack(self, ack: Ack) -> None:
        """A broker acknowledged one of the producer's batches; checks every invariant the new ack can break."""
        self.acks += 1
        self.lost_acks += int(not ack.delivered)
        tp = f"{ack.topic}-{ack.partition}"
        stream = self._streams.setdefault((ack.producer_id, ack.topic, ack.partition), _Stream())
        earlier = stream.acks.get(ack.base_sequence)
        if earlier is not None:  # the producer never re-batches: the same base sequence is the same batch
            if (earlier.base_offset, earlier.count) != (ack.base_offset, ack.count):
                self.violate("idempotent-retry-same-offsets",
                             f"producer {ack.producer_id} {tp}: {earlier.where()}, and again: {ack.where()}")
            return
        offsets = self._offsets.setdefault((ack.topic, ack.partition), [])
        i = bisect.bisect_left(offsets, (ack.base_offset, ack.last_offset))
        for _, last, other in offsets[max(i - 1, 0):i + 1]:
            if other.base_offset <= ack.last_offset and ack.base_offset <= last:
                self.violate("idempotent-acks-disjoint",
                             f"producer {ack.producer_id} {tp}: {ack.where()} overlaps producer "
                             f"{other.producer_id}'s {other.where()}")
        offsets.insert(i, (ack.base_offset, ack.last_offset, ack))
        j = bisect.bisect_left(stream.sequences, ack.base_sequence)
        before = stream.acks[stream.sequences[j - 1]] if j > 0 else None
        after = stream.acks[stream.sequences[j]] if j < len(stream.sequences) else None
        stream.sequences.insert(j, ack.base_sequence)
        stream.acks[ack.base_sequence] = ack
        for low, high in ((before, ack), (ack, after)):
            if low is None or high is None:
                continue
            if low.last_offset >= high.base_offset:
                self.violate("idempotent-sequence-order-is-offset-order",
                             f"producer {ack.producer_id} {tp}: {high.where()} is not after {low.where()}")
            elif self.sole_writer and low.last_sequence + 1 == high.base_sequence \
                    and low.last_offset + 1 != high.base_offset:
                self.violate("idempotent-acks-adjacent",
                             f"producer {ack.producer_id} {tp}: {low.where()}, then {high.where()}: offsets "
                             f"{low.last_offset + 1}..{high.base_offset - 1} hold no acknowledged batch (the "
                             f"producer is the topic's only writer: a batch written twice, or never acknowledged)")

    def on_out_of_order(self, producer_id: int, topic: str, partition: int, base_sequence: int, count: int,
                        broker_id: int) -> None:
        """The leader refused, as OUT_OF_ORDER_SEQUENCE_NUMBER, the batch right after the highest acknowledged
        sequence."""
        self.violate("idempotent-next-sequence-accepted",
                     f"producer {producer_id} {topic}-{partition}: broker {broker_id} refused sequences "
                     f"{base_sequence}..{base_sequence + count - 1} as out of order, the batch right after the "
                     f"highest acknowledged sequence")

    def on_request_raised(self, invariant: str, broker_id: int, process: str, error: BaseException) -> None:
        """A live broker's Produce or InitProducerId path raised ``error`` (``invariant`` names which): where it was
        raised, innermost frame first."""
        frames = traceback.extract_tb(error.__traceback__)[::-1][:3]
        where = " <- ".join(f"{Path(f.filename).name}:{f.lineno} {f.name}" for f in frames) or "unknown"
        self.violate(invariant,
                     f"broker {broker_id} ({process}, alive and serving): {type(error).__name__}: {error} "
                     f"at {where}")

    def check_gapless(self) -> None:
        """Once the producer has drained: no hole between two acknowledged batches of a stream."""
        for (producer_id, topic, partition), stream in sorted(self._streams.items()):
            expected = 0
            for sequence in stream.sequences:
                ack = stream.acks[sequence]
                if sequence > expected:
                    self.violate("idempotent-acks-gapless",
                                 f"producer {producer_id} {topic}-{partition}: sequences {expected}.."
                                 f"{sequence - 1} were never acknowledged, yet {ack.where()} was")
                    break
                expected = max(expected, ack.last_sequence + 1)

    def acknowledged(self) -> list[Ack]:
        """Every distinct acknowledged batch, by partition and offset (for tests and reports)."""
        return [a for key in sorted(self._offsets) for _, _, a in self._offsets[key]]
