"""A leader's fetch sessions (KIP-227; Kafka's ``FetchSession.scala``: ``FetchSessionCache``, ``FetchManager``).

Why: every follower fetches every partition it follows from a leader about twice a second. Without sessions
each fetch names all of them and each answer repeats all of them. With a session the leader remembers each
partition's last fetch state (offset, leader epoch, record limit) and the high watermark it last sent; an
incremental fetch then names only the partitions whose state changed (and those to forget), and the answer only
the partitions with records, a new high watermark or an error. The leader still serves — and records as
fetched, for ISR upkeep — every partition of the session on every fetch.

The cache holds at most ``max.incremental.fetch.session.cache.slots`` sessions. A new one may evict a stale
session (unused for ``min.incremental.fetch.session.eviction.ms``), or else the least valuable evictable one
(fewer partitions; a follower's session is evictable only once it is older than the eviction time), as Kafka's
``tryEvict``. Session ids come from the runtime's random source, so the simulator replays them.

Log lines are Kafka 2.8.2's, under its loggers: ``FetchManager`` (the context chosen), ``FetchSessionCache``
(sessions created, DEBUG; evictions, TRACE) and ``IncrementalFetchContext`` (the INFO "Possible duplicate
request"); partitions print as ``N partition(s)``, or listed when TRACE is on (``partitionsToLogString``).
"""

from __future__ import annotations

import logging
import random
from collections.abc import Iterator
from dataclasses import dataclass

from zkcontroller.model import TopicPartition
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.inter_broker import (
    FINAL_EPOCH,
    INITIAL_EPOCH,
    INVALID_SESSION_ID,
    FetchPartitionResult,
    FetchRequest,
    FetchResponse,
    next_fetch_session_epoch,
)
from zkcontroller.runtime.log_lines import TRACE

log = logging.getLogger("kafka.server.FetchManager")
cache_log = logging.getLogger("kafka.server.FetchSessionCache")
incremental_log = logging.getLogger("kafka.server.IncrementalFetchContext")


def partitions_to_log_string(logger: logging.Logger, partitions: list[TopicPartition]) -> str:
    """``FetchSession.partitionsToLogString``: the partitions listed when TRACE is on, else their count."""
    if logger.isEnabledFor(TRACE):
        return "(" + ", ".join(str(tp) for tp in partitions) + ")"
    return f"{len(partitions)} partition(s)"


def _bool(value: bool) -> str:
    return "true" if value else "false"


def evictable_key_string(key: tuple[bool, int, int]) -> str:
    """The case class ``EvictableKey``'s ``toString``."""
    return f"EvictableKey(privileged={_bool(key[0])}, size={key[1]}, id={key[2]})"


@dataclass(slots=True)
class CachedPartition:
    """One partition of a session: the follower's last fetch state and the high watermark last sent to it."""

    topic_partition: TopicPartition
    current_leader_epoch: int
    fetch_offset: int
    max_records: int
    high_watermark: int = -1
    last_fetched_epoch: int = -1

    def must_respond(self, result: FetchPartitionResult) -> bool:
        """Kafka's ``maybeUpdateResponseData``: records, a changed high watermark, a diverging epoch or an error go
        in the answer. An error also forgets the high watermark, so the partition is sent again once the error
        clears."""
        respond = result.records > 0
        if self.high_watermark != result.high_watermark:
            respond = True
            self.high_watermark = result.high_watermark
        if result.error is not Errors.NONE:
            self.high_watermark = -1
            respond = True
        if result.diverging_end_offset >= 0:  # always answered, to trigger the follower's truncation
            respond = True
        return respond


@dataclass(slots=True)
class FetchSession:
    id: int
    privileged: bool
    """A follower's session (a consumer's is not; ours are all followers')."""
    partitions: dict[TopicPartition, CachedPartition]
    creation_ms: int
    last_used_ms: int
    epoch: int
    cached_size: int = -1
    """The size the cache last accounted for (-1: not in the cache)."""
    evictable_by_all: bool = False
    evictable_by_privileged: bool = False

    def update(self, request: FetchRequest) -> list[TopicPartition]:
        """Apply an incremental fetch: its partitions are added or updated, its forgotten ones removed (returned)."""
        for asked in request.partitions:
            cached = self.partitions.get(asked.topic_partition)
            if cached is None:
                self.partitions[asked.topic_partition] = CachedPartition(
                    asked.topic_partition, asked.current_leader_epoch, asked.fetch_offset, request.max_records,
                    last_fetched_epoch=asked.last_fetched_epoch)
            else:
                cached.current_leader_epoch = asked.current_leader_epoch
                cached.fetch_offset = asked.fetch_offset
                cached.max_records = request.max_records
                cached.last_fetched_epoch = asked.last_fetched_epoch
        return [tp for tp in request.forgotten if self.partitions.pop(tp, None) is not None]

    def evictable_key(self) -> tuple[bool, int, int]:
        """Kafka's ``EvictableKey``: the lower, the less valuable."""
        return self.privileged, self.cached_size, self.id

    def __str__(self) -> str:
        """``FetchSession.toString``."""
        return (f"FetchSession(id={self.id}, privileged={_bool(self.privileged)}, "
                f"partitionMap.size={len(self.partitions)}, creationMs={self.creation_ms}, "
                f"lastUsedMs={self.last_used_ms}, epoch={self.epoch})")


class FetchSessionCache:
    def __init__(self, max_entries: int, eviction_ms: int, rng: random.Random) -> None:
        self.max_entries = max_entries
        self.eviction_ms = eviction_ms
        self._rng = rng
        self._sessions: dict[int, FetchSession] = {}
        self.total_partitions = 0
        """``NumIncrementalFetchPartitionsCached``."""
        self.evictions = 0
        """``IncrementalFetchSessionEvictionsPerSec`` (count)."""

    def __len__(self) -> int:
        """``NumIncrementalFetchSessions``."""
        return len(self._sessions)

    def get(self, session_id: int) -> FetchSession | None:
        return self._sessions.get(session_id)

    def _new_session_id(self) -> int:
        while True:
            session_id = self._rng.randrange(1, 0x7FFFFFFF)
            if session_id not in self._sessions:
                return session_id

    def maybe_create_session(self, now_ms: int, privileged: bool,
                             partitions: dict[TopicPartition, CachedPartition]) -> int:
        """A new session for a full fetch's partitions if there is room (or room can be made); else no session."""
        if len(self._sessions) >= self.max_entries and not self._try_evict(
                privileged, (privileged, len(partitions), 0), now_ms):
            cache_log.debug("No fetch session created for privileged=%s, size=%d.", privileged, len(partitions))
            return INVALID_SESSION_ID
        session = FetchSession(self._new_session_id(), privileged, partitions, now_ms, now_ms,
                               next_fetch_session_epoch(INITIAL_EPOCH))
        if cache_log.isEnabledFor(logging.DEBUG):  # formatted now: the session changes after
            cache_log.debug("Created fetch session %s", str(session))
        self._sessions[session.id] = session
        self.touch(session, now_ms)
        return session.id

    def _try_evict(self, privileged: bool, key: tuple[bool, int, int], now_ms: int) -> bool:
        """Evict the least recently used session if it is stale; else the least valuable evictable one, if it is
        worth less than the session to be created."""
        if not self._sessions:
            cache_log.log(TRACE, "There are no cache entries to evict.")
            return False
        oldest = min(self._sessions.values(), key=lambda s: (s.last_used_ms, s.id))
        if now_ms - oldest.last_used_ms > self.eviction_ms:
            cache_log.log(TRACE, "Evicting stale FetchSession %d.", oldest.id)
            self.remove(oldest.id)
            self.evictions += 1
            return True
        candidates = [s for s in self._sessions.values()
                      if (s.evictable_by_privileged if privileged else s.evictable_by_all)]
        if not candidates:
            cache_log.log(TRACE, "No evictable entries found.")
            return False
        cheapest = min(candidates, key=FetchSession.evictable_key)
        if key < cheapest.evictable_key():
            if cache_log.isEnabledFor(TRACE):
                cache_log.log(TRACE, "Can't evict %s with %s", evictable_key_string(cheapest.evictable_key()),
                              evictable_key_string(key))
            return False
        if cache_log.isEnabledFor(TRACE):
            cache_log.log(TRACE, "Evicting %s with %s.", evictable_key_string(cheapest.evictable_key()),
                          evictable_key_string(key))
        self.remove(cheapest.id)
        self.evictions += 1
        return True

    def remove(self, session_id: int) -> FetchSession | None:
        session = self._sessions.pop(session_id, None)
        if session is not None:
            self.total_partitions -= max(session.cached_size, 0)
            session.cached_size = -1
        return session

    def touch(self, session: FetchSession, now_ms: int) -> None:
        """Mark ``session`` used now: its size is re-accounted and its evictability re-judged (Kafka does both
        here, not at eviction time)."""
        session.last_used_ms = now_ms
        self.total_partitions += len(session.partitions) - max(session.cached_size, 0)
        session.cached_size = len(session.partitions)
        old_enough = now_ms - session.creation_ms > self.eviction_ms
        session.evictable_by_privileged = not session.privileged or old_enough
        session.evictable_by_all = old_enough


@dataclass(frozen=True, slots=True)
class FetchTarget:
    """One partition a fetch serves, with the fetch state to serve it at."""

    topic_partition: TopicPartition
    current_leader_epoch: int
    fetch_offset: int
    max_records: int
    last_fetched_epoch: int = -1


class FetchContext:
    """What one fetch serves (`targets`) and how its answer is cut down (`respond`)."""

    session_id = INVALID_SESSION_ID

    def targets(self) -> Iterator[FetchTarget | CachedPartition]:
        return iter(())

    def respond(self, results: list[FetchPartitionResult]) -> FetchResponse:
        return FetchResponse(Errors.NONE, tuple(results), self.session_id)


class SessionErrorContext(FetchContext):
    """The fetch named a session that is gone or at another epoch: nothing is served, the follower starts over."""

    def __init__(self, error: Errors) -> None:
        self.error = error

    def respond(self, results: list[FetchPartitionResult]) -> FetchResponse:
        return FetchResponse(self.error)


class SessionlessFetchContext(FetchContext):
    def __init__(self, request: FetchRequest) -> None:
        self._request = request

    def targets(self) -> Iterator[FetchTarget | CachedPartition]:
        return _targets(self._request)


class FullFetchContext(SessionlessFetchContext):
    """A full fetch: every partition is served and answered, and a session is opened for them if there is room."""

    def __init__(self, request: FetchRequest, cache: FetchSessionCache, now_ms: int, privileged: bool) -> None:
        super().__init__(request)
        self._cache, self._now_ms, self._privileged = cache, now_ms, privileged

    def respond(self, results: list[FetchPartitionResult]) -> FetchResponse:
        asked = {p.topic_partition: p for p in self._request.partitions}
        cached = {r.topic_partition: CachedPartition(r.topic_partition, asked[r.topic_partition].current_leader_epoch,
                                                     asked[r.topic_partition].fetch_offset,
                                                     self._request.max_records, r.high_watermark,
                                                     asked[r.topic_partition].last_fetched_epoch)
                  for r in results}
        self.session_id = self._cache.maybe_create_session(self._now_ms, self._privileged, cached)
        return super().respond(results)


class IncrementalFetchContext(FetchContext):
    """An incremental fetch: every partition of the session is served; only those with news are answered."""

    def __init__(self, session: FetchSession, request_epoch: int) -> None:
        self._session = session
        self._expected_epoch = next_fetch_session_epoch(request_epoch)
        self.session_id = session.id

    @property
    def session(self) -> FetchSession:
        return self._session

    def targets(self) -> Iterator[FetchTarget | CachedPartition]:
        return iter(list(self._session.partitions.values()))  # the cached states carry the same four fields

    def respond(self, results: list[FetchPartitionResult]) -> FetchResponse:
        if self._session.epoch != self._expected_epoch:
            incremental_log.info("Incremental fetch session %d expected epoch %d, but got %d.  Possible duplicate "
                                 "request.", self._session.id, self._expected_epoch, self._session.epoch)
            return FetchResponse(Errors.INVALID_FETCH_SESSION_EPOCH, (), self._session.id)
        partitions = self._session.partitions
        return super().respond([r for r in results if (c := partitions.get(r.topic_partition)) is not None
                                and c.must_respond(r)])


def _targets(request: FetchRequest) -> Iterator[FetchTarget]:
    return (FetchTarget(p.topic_partition, p.current_leader_epoch, p.fetch_offset, request.max_records,
                        p.last_fetched_epoch)
            for p in request.partitions)


class FetchManager:
    """Turns a fetch into its `FetchContext` against the session cache (Kafka's ``FetchManager.newContext``)."""

    def __init__(self, cache: FetchSessionCache) -> None:
        self.cache = cache

    def new_context(self, request: FetchRequest, now_ms: int, privileged: bool = True) -> FetchContext:
        if request.is_full:
            removed_session = ""
            if request.session_id != INVALID_SESSION_ID and self.cache.remove(request.session_id) is not None:
                removed_session = f" Removed fetch session {request.session_id}."
            context: FetchContext
            if request.session_epoch == FINAL_EPOCH:
                context, suffix = SessionlessFetchContext(request), " Will not try to create a new session."
            else:
                context, suffix = FullFetchContext(request, self.cache, now_ms, privileged), ""
            if log.isEnabledFor(logging.DEBUG):
                log.debug("Created a new full FetchContext with %s.%s%s",
                          partitions_to_log_string(log, [p.topic_partition for p in request.partitions]),
                          removed_session, suffix)
            return context
        session = self.cache.get(request.session_id)
        if session is None:
            log.debug("Session error for %d: no such session ID found.", request.session_id)
            return SessionErrorContext(Errors.FETCH_SESSION_ID_NOT_FOUND)
        if session.epoch != request.session_epoch:
            log.debug("Session error for %d: expected epoch %d, but got %d instead.", request.session_id,
                      session.epoch, request.session_epoch)
            return SessionErrorContext(Errors.INVALID_FETCH_SESSION_EPOCH)
        debug = log.isEnabledFor(logging.DEBUG)
        added = [p.topic_partition for p in request.partitions if p.topic_partition not in session.partitions] \
            if debug else []
        removed = session.update(request)
        if not session.partitions:
            if debug:
                log.debug("Created a new sessionless FetchContext and closing session id %d, epoch %d: after removing "
                          "%s, there are no more partitions left.", session.id, session.epoch,
                          partitions_to_log_string(log, removed))
            self.cache.remove(session.id)
            return SessionlessFetchContext(request)
        self.cache.touch(session, now_ms)
        session.epoch = next_fetch_session_epoch(session.epoch)
        if debug:
            new = set(added)
            updated = [p.topic_partition for p in request.partitions if p.topic_partition not in new]
            log.debug("Created a new incremental FetchContext for session id %d, epoch %d: added %s, updated %s, "
                      "removed %s", session.id, session.epoch, partitions_to_log_string(log, added),
                      partitions_to_log_string(log, updated), partitions_to_log_string(log, removed))
        return IncrementalFetchContext(session, request.session_epoch)

