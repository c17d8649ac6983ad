"""Audit findings on the leader's and follower's fetch handling (Kafka 2.8.2's Partition and fetcher threads)."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from zkcontroller.broker.replica_fetcher import fetch_metadata_string
from zkcontroller.model import Broker, EndPoint, TopicPartition
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.inter_broker import FetchPartition, FetchPartitionResult, FetchRequest, FetchResponse
from zkcontroller.protocol.transport import BrokerUnreachableError
from zkcontroller.protocol.wire import fetch_codec
from zkcontroller.runtime.runtime import AsyncioRuntime
from zkcontroller.runtime.tcp_transport import TcpTransport

from .helpers import update_metadata
from .replica_helpers import (
    Brokers,
    brokers_fixture,  # noqa: F401
    state,
)

TP = TopicPartition("t", 0)


def fetch(replica: int, epoch: int, offset: int = 0) -> FetchRequest:
    return FetchRequest(replica, (FetchPartition(TP, epoch, offset),))


async def test_a_fetch_without_a_current_leader_epoch_skips_the_epoch_check(brokers: Brokers) -> None:
    """Audit #9: -1 (Fetch v0-v8, or no known epoch) is Kafka's Optional.empty: checkCurrentLeaderEpoch answers
    NONE, so the leader serves it and a non-leader answers NOT_LEADER_OR_FOLLOWER, never FENCED_LEADER_EPOCH."""
    brokers.lead(state(leader_epoch=3))
    leader = brokers.rms[1]
    leader.append(TP, 4)
    (answer,) = leader.handle_fetch(fetch(2, -1)).partitions
    assert (answer.error, answer.records) == (Errors.NONE, 4)
    assert leader.partition(TP).followers[2].log_end_offset == 0  # type: ignore[union-attr]
    assert leader.handle_fetch(fetch(2, -1, offset=5)).partitions[0].error is Errors.OFFSET_OUT_OF_RANGE
    assert brokers.rms[2].handle_fetch(fetch(3, -1)).partitions[0].error is Errors.NOT_LEADER_OR_FOLLOWER


async def test_out_of_range_truncates_to_the_leaders_log_end_offset(
        brokers: Brokers, caplog: pytest.LogCaptureFixture) -> None:
    """Audit #8: Kafka's fetchOffsetAndTruncate truncates a follower ahead of the leader to the leader's LEO (not
    its HW); a follower not ahead keeps its log."""
    brokers.lead(state())
    leader = brokers.rms[1]
    brokers.rms[3].pause_fetchers()  # broker 3 holds the HW at 0
    leader.append(TP, 6)
    await brokers.fetch_all()
    assert (leader.log_end_offset(TP), leader.high_watermark(TP)) == (6, 0)
    follower = brokers.rms[2].partition(TP)
    assert follower is not None
    follower.log_end_offset = 9  # a tail the leader never had (an old leader's, after an unclean election)
    follower.last_fetched_epoch = -1  # no epoch known (a restarted broker): the offset check decides
    (answer,) = leader.handle_fetch(fetch(2, 0, offset=9)).partitions
    assert (answer.error, answer.log_end_offset) == (Errors.OFFSET_OUT_OF_RANGE, 6)
    await brokers.rms[2].fetchers[1].fetch_once()
    assert follower.log_end_offset == 6
    assert "[ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0] Reset fetch offset for partition t-0 from 9 to " \
           "current leader's latest offset 6" in caplog.messages
    await brokers.rms[2].fetchers[1].fetch_once()  # fetches on from 6
    assert leader.partition(TP).followers[2].log_end_offset == 6  # type: ignore[union-attr]


def test_the_leaders_log_end_offset_travels_with_out_of_range_on_the_wire() -> None:
    """Audit #8: the TCP path carries it too (in last_stable_offset, see docs/replication.md)."""
    out = FetchResponse(partitions=(FetchPartitionResult(TP, Errors.OFFSET_OUT_OF_RANGE, 3, log_end_offset=6),
                                    FetchPartitionResult(TopicPartition("t", 1), Errors.NONE, 3, 2, 1)))
    for version in (11, 12):
        back = fetch_codec.decode_response(version, fetch_codec.encode_response(out, version), 0)
        assert [(r.error, r.high_watermark, r.log_end_offset) for r in back.partitions] == [
            (Errors.OFFSET_OUT_OF_RANGE, 3, 6), (Errors.NONE, 3, -1)]


async def test_a_follower_copies_the_leaders_high_watermark_even_when_it_moves_back(brokers: Brokers) -> None:
    """Audit #12: ReplicaFetcherThread.processPartitionData sets the follower's HW to the leader's (clamped to the
    log), so after an election to a leader that has not advanced its HW yet, the follower's HW drops to it."""
    brokers.lead(state())
    brokers.rms[1].append(TP, 4)
    await brokers.fetch_all()  # both followers get the records
    await brokers.fetch_all()  # broker 2 fetches first (HW still 0), broker 3 then raises it and learns 4
    assert (brokers.rms[2].high_watermark(TP), brokers.rms[3].high_watermark(TP)) == (0, 4)
    brokers.lead(state(leader=2, leader_epoch=1))
    assert brokers.rms[2].high_watermark(TP) == 0
    await brokers.rms[3].fetchers[2].fetch_once()  # broker 1, in the ISR, has not fetched: the leader's HW stays 0
    assert brokers.rms[3].log_offsets()[TP] == (4, 0)


async def test_a_failed_fetch_delays_every_partition_by_twice_the_back_off(
        brokers: Brokers, caplog: pytest.LogCaptureFixture) -> None:
    """Audit #14: Kafka's processFetchRequest waits replica.fetch.backoff.ms after a failed fetch and then delays
    every partition by as much again (its own comment: "effectively doubling the delay"), with a WARN."""
    brokers.lead(state())
    fetcher = brokers.rms[2].fetchers[1]
    backoff = brokers.rms[2].config.replica_fetch_backoff_ms
    handler = brokers.transport._handlers.pop(1)  # broker 1 unreachable
    assert await fetcher.fetch_once() is None
    wait = brokers.rms[2].config.replica_fetch_wait_max_ms
    # AbstractFetcherThread.processFetchRequest's warn(s"Error in response for fetch request $fetchRequest", t):
    # FetchRequest.Builder.toString, then the throwable (NetworkClientUtils.sendAndReceive's IOException)
    assert ("[ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0] Error in response for fetch request "
            f"(type=FetchRequest, replicaId=2, maxWait={wait}, minBytes=1, maxBytes=10485760, "
            "fetchData={t-0=PartitionData(fetchOffset=0, "
            "logStartOffset=0, maxBytes=1048576, currentLeaderEpoch=Optional[0], lastFetchedEpoch=Optional.empty)}, "
            "isolationLevel=READ_UNCOMMITTED, toForget=, metadata=(sessionId=INVALID, epoch=INITIAL), rackId=)\n"
            "java.io.IOException: Connection to 1 was disconnected before the response was read") in caplog.messages
    brokers.transport.register(1, handler)
    sent = fetcher.fetches
    brokers.clock.advance(backoff)  # the fetch loop's own back-off is over; the partitions are still delayed
    assert await fetcher.fetch_once() is None and fetcher.fetches == sent
    brokers.clock.advance(backoff)
    assert await fetcher.fetch_once() is not None and fetcher.fetches == sent + 1


async def test_the_fetcher_keeps_the_leader_endpoint_it_was_given(brokers: Brokers) -> None:
    """Audit #14: Kafka's fetcher thread is bound to the BrokerEndPoint of addFetcherForPartitions; an
    UpdateMetadata that no longer lists the leader does not stop it fetching (a LeaderAndIsr moves it)."""
    brokers.lead(state())
    follower = brokers.rms[2]
    assert follower.handle_control_request(update_metadata(live=(2, 3), controller_id=1)).error is Errors.NONE
    brokers.rms[1].append(TP, 2)
    assert await follower.fetchers[1].fetch_once() is True
    assert follower.log_end_offset(TP) == 2


class _Unconnectable:
    """A transport with connections to open (as `TcpTransport`) whose connect fails."""

    listener_name = "PLAINTEXT"

    async def connect(self, broker: Broker, timeout_ms: int | None = None, *, client: str = "") -> None:
        raise BrokerUnreachableError(f"cannot connect to broker {broker.id}")

    async def send(self, broker: Broker, request: object) -> object:
        raise AssertionError("no request without a connection")


async def test_a_fetch_that_cannot_connect_warns_with_awaitreadys_exception(
        brokers: Brokers, caplog: pytest.LogCaptureFixture) -> None:
    """``ReplicaFetcherBlockingSend.sendRequest`` first awaits the connection: ``NetworkClientUtils.awaitReady``
    throws ``IOException("Connection to " + node + " failed.")``, ``node`` as ``Node.toString``."""
    brokers.lead(state())
    fetcher = brokers.rms[2].fetchers[1]
    fetcher.source = Broker(1, (EndPoint("kafka-1", 9092, "PLAINTEXT", "PLAINTEXT"),), rack="r1")
    fetcher._transport = _Unconnectable()
    assert await fetcher.fetch_once() is None
    [line] = [m for m in caplog.messages if "Error in response for fetch request" in m]
    assert line.endswith("\njava.io.IOException: Connection to kafka-1:9092 (id: 1 rack: r1) failed.")


class _NeverConnects:
    """An ``open_connection`` that never completes (a leader that drops SYNs)."""

    async def __call__(self, *address: object) -> object:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


@pytest.mark.parametrize(("socket_ms", "transport_kwargs", "exception"), [
    # replica.socket.timeout.ms ends first: SocketTimeoutException, even where the shared transport's own bound
    # (controller.socket.timeout.ms, 50 ms here) is shorter
    (150, {"connect_timeout_ms": 50}, "java.net.SocketTimeoutException: Failed to connect within 150 ms"),
    # the NetworkClient's connection-setup timeout ends first: the connection failed, awaitReady's IOException
    (30000, {"connection_setup_timeout_ms": 80, "connection_setup_timeout_max_ms": 80},
     "java.io.IOException: Connection to 127.0.0.1:9 (id: 1 rack: null) failed."),
])
async def test_a_fetchers_connect_is_bounded_by_replica_socket_timeout_ms(
        brokers: Brokers, caplog: pytest.LogCaptureFixture, socket_ms: int, transport_kwargs: dict[str, int],
        exception: str) -> None:
    """``ReplicaFetcherBlockingSend.sendRequest``: ``if (!awaitReady(networkClient, sourceNode, time,
    replicaSocketTimeoutMs)) throw new SocketTimeoutException(s"Failed to connect within $socketTimeout ms")``."""
    brokers.lead(state())
    fetcher = brokers.rms[2].fetchers[1]
    fetcher._config = dataclasses.replace(fetcher._config, replica_socket_timeout_ms=socket_ms)
    fetcher.source = Broker(1, (EndPoint("127.0.0.1", 9, "PLAINTEXT", "PLAINTEXT"),))
    transport = TcpTransport(AsyncioRuntime(), **transport_kwargs)
    transport._open_connection = _NeverConnects()  # type: ignore[assignment]
    fetcher._transport = transport
    assert await asyncio.wait_for(fetcher.fetch_once(), 20) is None
    [line] = [m for m in caplog.messages if "Error in response for fetch request" in m]
    assert line.endswith("\n" + exception)
    await transport.close()


async def test_the_fetch_request_prints_as_the_builders_tostring(brokers: Brokers) -> None:
    """``FetchRequest.Builder.toString`` of an incremental fetch: the partitions sent (``toSend``) as a map of
    ``PartitionData``, the forgotten ones joined by ", " (``Utils.join``), ``FetchMetadata.toString``; a follower
    with records sends the epoch of its last ones (``lastFetchedEpoch``)."""
    brokers.lead(state(leader_epoch=4))
    fetcher = brokers.rms[2].fetchers[1]
    follower = brokers.rms[2].partition(TP)
    assert follower is not None
    follower.log_end_offset = 7
    request = FetchRequest(2, (FetchPartition(TP, 4, 7, last_fetched_epoch=4),
                               FetchPartition(TopicPartition("u", 1), -1, 0)),
                           session_id=123, session_epoch=5, forgotten=(TopicPartition("a", 0), TopicPartition("b", 2)))
    wait = brokers.rms[2].config.replica_fetch_wait_max_ms
    assert fetcher.fetch_request_string(request) == (
        f"(type=FetchRequest, replicaId=2, maxWait={wait}, minBytes=1, maxBytes=10485760, fetchData={{"
        "t-0=PartitionData(fetchOffset=7, logStartOffset=0, maxBytes=1048576, currentLeaderEpoch=Optional[4], "
        "lastFetchedEpoch=Optional[4]), u-1=PartitionData(fetchOffset=0, logStartOffset=0, maxBytes=1048576, "
        "currentLeaderEpoch=Optional.empty, lastFetchedEpoch=Optional.empty)}, isolationLevel=READ_UNCOMMITTED, "
        "toForget=a-0, b-2, metadata=(sessionId=123, epoch=5), rackId=)")
    assert fetch_metadata_string(123, -1) == "(sessionId=123, epoch=FINAL)"


class _SlowLeader:
    """A transport (no connections to open) whose leader answers after ``turns`` loop turns, or never (None)."""

    def __init__(self, inner: object, turns: int | None) -> None:
        self.inner = inner
        self.turns = turns

    async def send(self, broker: Broker, request: object) -> object:
        if self.turns is None:
            await asyncio.Event().wait()
        for _ in range(self.turns or 0):
            await asyncio.sleep(0)
        return await self.inner.send(broker, request)  # type: ignore[attr-defined]


@pytest.mark.parametrize(("socket_ms", "request_ms", "turns", "answered"), [
    # the answer waits request.timeout.ms, however short replica.socket.timeout.ms is (it bounds the connect only)
    (100, 30_000, 5, True),
    # request.timeout.ms ends first: the NetworkClient disconnects, sendAndReceive's IOException
    (30_000, 100, None, False),
])
async def test_a_fetchs_answer_waits_request_timeout_ms(
        brokers: Brokers, caplog: pytest.LogCaptureFixture, socket_ms: int, request_ms: int, turns: int | None,
        answered: bool) -> None:
    """``ReplicaFetcherBlockingSend`` builds its NetworkClient with ``brokerConfig.requestTimeoutMs`` as the request
    timeout; ``replicaSocketTimeoutMs`` only bounds ``awaitReady``. (Timeouts of 10 s and more never fire on the
    manual runtime; shorter ones after one loop turn.)"""
    brokers.lead(state())
    brokers.rms[1].append(TP, 3)
    fetcher = brokers.rms[2].fetchers[1]
    fetcher._config = dataclasses.replace(fetcher._config, replica_socket_timeout_ms=socket_ms,
                                          request_timeout_ms=request_ms)
    fetcher._transport = _SlowLeader(brokers.transport, turns)  # type: ignore[assignment]
    outcome = await asyncio.wait_for(fetcher.fetch_once(), 20)
    lines = [m for m in caplog.messages if "Error in response for fetch request" in m]
    if answered:
        assert outcome is True and not lines
        assert brokers.rms[2].log_end_offset(TP) == 3
    else:
        assert outcome is None
        [line] = lines
        assert line.endswith("\njava.io.IOException: Connection to 1 was disconnected before the response was read")
        assert brokers.rms[2].log_end_offset(TP) == 0


class _Shifted:
    """The leader's answers with their records moved to start ``shift`` offsets from the fetch offset (a
    compacted log's gap when positive; a broken leader when negative)."""

    def __init__(self, inner: object, shift: int) -> None:
        self.inner = inner
        self.shift = shift

    async def send(self, broker: Broker, request: object) -> object:
        response = await self.inner.send(broker, request)  # type: ignore[attr-defined]
        return dataclasses.replace(response, partitions=tuple(
            dataclasses.replace(r, base_offset=r.base_offset + self.shift) if r.records else r
            for r in response.partitions))


async def test_records_after_a_gap_move_the_log_end_past_it(brokers: Brokers) -> None:
    """``Log.appendAsFollower`` takes the offsets as given: a first batch starting above the log end (a compacted
    log) is appended and the log end becomes its last offset + 1."""
    brokers.lead(state())
    brokers.rms[1].append(TP, 4)
    fetcher = brokers.rms[2].fetchers[1]
    fetcher._transport = _Shifted(brokers.transport, 3)  # type: ignore[assignment]
    assert await fetcher.fetch_once() is True
    assert brokers.rms[2].log_end_offset(TP) == 7


async def test_records_starting_below_the_fetch_offset_mark_the_partition_failed(
        brokers: Brokers, caplog: pytest.LogCaptureFixture) -> None:
    """``UnexpectedAppendOffsetException``: ``processFetchRequest`` logs it and ``markPartitionFailed`` stops
    fetching the partition until a LeaderAndIsr adds it again; nothing is appended."""
    brokers.lead(state())
    brokers.rms[1].append(TP, 2)
    await brokers.fetch_all()
    brokers.rms[1].append(TP, 3)
    fetcher = brokers.rms[2].fetchers[1]
    fetcher._transport = _Shifted(brokers.transport, -1)  # type: ignore[assignment]
    assert await fetcher.fetch_once() is True  # records came (refused): fetch again at once, as Kafka's fetcher
    assert brokers.rms[2].log_end_offset(TP) == 2 and TP not in fetcher.fetching
    assert ("[ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0] Unexpected error occurred while processing data "
            "for partition t-0 at offset 2\nkafka.common.UnexpectedAppendOffsetException: Unexpected offset in append "
            "to t-0. First offset 1 is less than the next offset 2. First 10 offsets in append: List(1, 2, 3), last "
            "offset in append: 3. Log start offset = 0") in caplog.messages
    assert "[ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0] Partition t-0 marked as failed" in caplog.messages


class _OutOfOrder:
    """The leader's answers with their records replaced, on the wire, by batches whose last offsets go back (two
    batches ending at 4, then 3)."""

    def __init__(self, inner: object) -> None:
        self.inner = inner

    async def send(self, broker: Broker, request: object) -> object:
        response = await self.inner.send(broker, request)  # type: ignore[attr-defined]
        bad = fetch_codec.record_batch(2, 3) + fetch_codec.record_batch(3, 1)
        return dataclasses.replace(response, partitions=tuple(
            fetch_codec._partition_result(r.topic_partition.topic, {
                "partition": r.topic_partition.partition, "record_set": bad, "high_watermark": r.high_watermark,
                "error_code": 0}) if r.records else r
            for r in response.partitions))


async def test_out_of_order_offsets_mark_the_partition_failed_with_kafkas_message(
        brokers: Brokers, caplog: pytest.LogCaptureFixture) -> None:
    """``OffsetsOutOfOrderException`` is a ``RuntimeException``, not a corrupt record: ``processFetchRequest``'s
    ``case t: Throwable`` logs it with ``Log.append``'s message (every record's offset) and marks the partition
    failed. It used to be CORRUPT_MESSAGE, the partition delayed and fetched again for ever."""
    brokers.lead(state())
    brokers.rms[1].append(TP, 2)
    await brokers.fetch_all()
    brokers.rms[1].append(TP, 3)
    fetcher = brokers.rms[2].fetchers[1]
    fetcher._transport = _OutOfOrder(brokers.transport)  # type: ignore[assignment]
    assert await fetcher.fetch_once() is True  # the partition marked failed: fetch again at once, as Kafka's
    assert brokers.rms[2].log_end_offset(TP) == 2 and TP not in fetcher.fetching
    assert ("[ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0] Unexpected error occurred while processing data "
            "for partition t-0 at offset 2\nkafka.common.OffsetsOutOfOrderException: Out of order offsets found in "
            "append to t-0: List(2, 3, 4, 3)") in caplog.messages
    assert "[ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0] Partition t-0 marked as failed" in caplog.messages
