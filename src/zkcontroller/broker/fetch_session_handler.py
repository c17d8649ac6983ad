"""A follower's side of one fetch session with one leader (Kafka's client ``FetchSessionHandler``, KIP-227).

Why: see `fetch_session`. The handler remembers what the leader's session holds (each partition's last sent
fetch state), so each fetch it builds names only the partitions added or changed since, and forgets the ones
no longer fetched. It starts, and starts over after any error, with a full fetch at epoch 0; the leader's answer
opens the session (or not, when its cache is full: then every fetch stays full), and each good answer moves the
epoch on. An answer that does not fit the request (a full answer missing partitions, an incremental one naming
partitions outside the session) closes the session, as Kafka's handler does. Its INFO lines are Kafka's, with the
``[ReplicaFetcher replicaId=.., leaderId=.., fetcherId=0] `` prefix of the fetcher's ``LogContext``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass

from zkcontroller.model import TopicPartition
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.inter_broker import (
    FINAL_EPOCH,
    INITIAL_EPOCH,
    INVALID_SESSION_ID,
    FetchPartition,
    FetchRequest,
    FetchResponse,
    next_fetch_session_epoch,
)

log = logging.getLogger("org.apache.kafka.clients.FetchSessionHandler")


def fetch_metadata_string(session_id: int, epoch: int) -> str:
    """``FetchMetadata.toString``: ``(sessionId=INVALID, epoch=INITIAL)``, ``(sessionId=5, epoch=FINAL)``, ..."""
    session = "INVALID" if session_id == INVALID_SESSION_ID else str(session_id)
    shown = "INITIAL" if epoch == INITIAL_EPOCH else "FINAL" if epoch == FINAL_EPOCH else str(epoch)
    return f"(sessionId={session}, epoch={shown})"


@dataclass(frozen=True, slots=True)
class FetchRequestData:
    request: FetchRequest
    session_partitions: dict[TopicPartition, FetchPartition]
    """What the session holds once the leader applies ``request``: the fetch state of every partition served."""


class FetchSessionHandler:
    def __init__(self, replica_id: int, leader_id: int) -> None:
        self.replica_id = replica_id
        self.leader_id = leader_id
        self.session_id = INVALID_SESSION_ID
        self.epoch = INITIAL_EPOCH
        self._session: dict[TopicPartition, FetchPartition] = {}

    @property
    def _is_full(self) -> bool:
        return self.epoch == INITIAL_EPOCH

    def _ident(self) -> str:
        """The ``LogContext`` prefix ReplicaFetcherThread gives its handler (one fetcher per leader here)."""
        return f"[ReplicaFetcher replicaId={self.replica_id}, leaderId={self.leader_id}, fetcherId=0] "

    def _full_problem(self, response: FetchResponse) -> str | None:
        """``verifyFullFetchResponsePartitions``' text, its unclosed parentheses included."""
        answered = [r.topic_partition for r in response.partitions]
        extra = [tp for tp in answered if tp not in self._session]
        known = set(answered)
        omitted = [tp for tp in self._session if tp not in known]
        if not omitted and not extra:
            return None
        text = f"omitted=({', '.join(map(str, omitted))}, " if omitted else ""
        text += f"extra=({', '.join(map(str, extra))}, " if extra else ""
        return text + f"response=({', '.join(map(str, answered))})"

    def _incremental_problem(self, response: FetchResponse) -> str | None:
        """``verifyIncrementalFetchResponsePartitions``' text."""
        answered = [r.topic_partition for r in response.partitions]
        extra = [tp for tp in answered if tp not in self._session]
        if not extra:
            return None
        return f"extra=({', '.join(map(str, extra))}), response=({', '.join(map(str, answered))}), "

    def _metadata(self) -> str:
        return fetch_metadata_string(self.session_id, self.epoch)

    def build(self, partitions: Iterable[FetchPartition], max_records: int, max_wait_ms: int = 0) -> FetchRequestData:
        """The next fetch for ``partitions`` (everything this follower fetches from the leader now), which the
        leader may hold up to ``max_wait_ms`` while it has nothing to send."""
        wanted = {p.topic_partition: p for p in partitions}
        if self._is_full:
            self._session = wanted
            request = FetchRequest(self.replica_id, tuple(wanted.values()), max_records, self.session_id, self.epoch,
                                   max_wait_ms=max_wait_ms)
            return FetchRequestData(request, dict(wanted))
        changed, forgotten = [], []
        for tp, before in list(self._session.items()):
            now = wanted.get(tp)
            if now is None:
                del self._session[tp]
                forgotten.append(tp)
            elif (now.fetch_offset != before.fetch_offset or now.current_leader_epoch != before.current_leader_epoch
                  or now.last_fetched_epoch != before.last_fetched_epoch):
                self._session[tp] = now  # (the same partition: comparing the two fields that vary is cheaper)
                changed.append(now)
        for tp, now in wanted.items():
            if tp not in self._session:
                self._session[tp] = now
                changed.append(now)
        request = FetchRequest(self.replica_id, tuple(changed), max_records, self.session_id, self.epoch,
                               tuple(forgotten), max_wait_ms)
        return FetchRequestData(request, dict(self._session))

    def handle_response(self, response: FetchResponse) -> bool:
        """True if the answer may be used; otherwise the next fetch is a full one."""
        if response.error is not Errors.NONE:
            log.info("%sNode %d was unable to process the fetch request with %s: %s.", self._ident(), self.leader_id,
                     self._metadata(), response.error.name)
            if response.error is Errors.FETCH_SESSION_ID_NOT_FOUND:
                self.session_id = INVALID_SESSION_ID
            self.epoch = INITIAL_EPOCH
            return False
        # a full answer names every partition; an incremental one only partitions of the session
        problem = self._full_problem(response) if self._is_full else self._incremental_problem(response)
        if problem is not None:
            log.info("%sNode %d sent an invalid %s fetch response with %s", self._ident(), self.leader_id,
                     "full" if self._is_full else "incremental", problem)
            self.epoch = INITIAL_EPOCH
            return False
        if response.session_id == INVALID_SESSION_ID:
            self.session_id, self.epoch = INVALID_SESSION_ID, INITIAL_EPOCH
        elif self._is_full:
            self.session_id, self.epoch = response.session_id, next_fetch_session_epoch(INITIAL_EPOCH)
        else:
            self.epoch = next_fetch_session_epoch(self.epoch)
        return True

    def handle_error(self) -> None:
        """The fetch got no answer: close the session with the next (full) fetch."""
        self.epoch = INITIAL_EPOCH
