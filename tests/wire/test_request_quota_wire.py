"""``request_percentage`` on the wire (Kafka 2.8.2's ``ClientRequestQuotaManager`` through
``sendResponseMaybeThrottle``, ``sendResponseMaybeThrottleWithControllerQuota`` and ``handleProduceRequest``): a
request's handling time, on the broker's runtime clock (virtual here), recorded against its client's quota; above
it, ``throttle_time_ms`` in the answer (the larger of the request and controller mutation throttles), the connection
muted after it; acks=0 and inter-broker requests exempt.

Quota 1 % for client "c" (10 ms of handling per second). A first record counts over 10 windows (one sample, just
begun): ``h`` ms of handling is ``h / 10`` %, so the rate is ``h / 100`` %/s and the throttle
``(h / 100 - 1) / 1 x 10 000`` ms: 105 ms gives 500 ms; at most one window, 1000 ms."""

from __future__ import annotations

import asyncio
import io
from datetime import timedelta
from typing import Any

from kio.serial import entity_reader, entity_writer
from tests.helpers import ManualRuntime, assert_sleeps_exactly, until_idle

from zkcontroller.broker.client_quota_manager import ANONYMOUS, ClientRequestQuotaManager, mark_local_complete
from zkcontroller.broker.controller_mutation_quota import (
    THROTTLING_QUOTA_EXCEEDED,
    UNBOUNDED,
    ControllerMutationQuota,
    ControllerMutationQuotaManager,
    ThrottlingQuotaExceeded,
)
from zkcontroller.broker.kafka_apis import KafkaApis
from zkcontroller.protocol.wire import codec
from zkcontroller.protocol.wire.client_apis import (
    API_VERSIONS,
    CREATE_TOPICS,
    METADATA,
    PRODUCE,
    PRODUCE_RESPONSE,
    TopicCreated,
    TopicToCreate,
    schema_module,
)
from zkcontroller.protocol.wire.frames import decode_response_header
from zkcontroller.runtime.socket_server import ThrottledResponse

from .server_fixture import request_frame
from .test_produce_wire import Replicas, apis, batch, frame  # noqa: F401 (the fixture)

T0 = 1_000_000


def _frame(api_key: int, version: int, request: Any, client_id: str = "c") -> bytes:
    buf = io.BytesIO()
    entity_writer(type(request))(buf, request)
    return request_frame(api_key, version, 3, buf.getvalue(), client_id)[4:]


def create_frame(version: int, name: str) -> bytes:
    m = schema_module(CREATE_TOPICS, version, "request")
    return _frame(CREATE_TOPICS, version, m.CreateTopicsRequest(
        topics=(m.CreatableTopic(name=name, num_partitions=1, replication_factor=1, assignments=(), configs=()),),
        timeout=timedelta(seconds=1), validate_only=False))


def decoded(payload: bytes, api_key: int, version: int, name: str) -> Any:
    _, offset = decode_response_header(payload, api_key, version)
    cls = getattr(schema_module(api_key, version, "response"), name)
    return entity_reader(cls)(memoryview(payload)[offset:], 0)[0]


def throttle_ms(response: Any) -> int:
    return round(response.throttle_time / timedelta(milliseconds=1))


class Setup:
    """A KafkaApis whose CreateTopics takes ``handling_ms`` of runtime time, then waits ``waiting_ms`` after marking
    its local completion (Kafka's DelayedCreatePartitions), counting its partitions against the mutation quota."""

    def __init__(self) -> None:
        self.runtime = ManualRuntime()
        self.runtime.now = T0
        self.requests = ClientRequestQuotaManager(self.runtime)  # type: ignore[arg-type]
        self.requests.update_quota(None, "c", 1.0)
        self.mutations = ControllerMutationQuotaManager(self.runtime)  # type: ignore[arg-type]
        self.handling_ms = 0
        self.waiting_ms = 0
        self.api = KafkaApis(1, control_handler=lambda: None, metadata_cache=lambda: None, cluster_id=lambda: "x",
                             create_topics=self._create, request_quotas=lambda: self.requests,
                             controller_mutation_quotas=lambda: self.mutations)

    async def _create(self, topics: list[TopicToCreate], validate_only: bool, timeout_ms: int,
                      quota: ControllerMutationQuota = UNBOUNDED) -> list[TopicCreated]:
        results = []
        for t in topics:
            try:
                quota.record(t.num_partitions)
                results.append(TopicCreated(t.name))
            except ThrottlingQuotaExceeded as e:
                results.append(TopicCreated(t.name, THROTTLING_QUOTA_EXCEEDED, str(e)))
        await self.runtime.sleep_ms(self.handling_ms)
        mark_local_complete(self.runtime.now_ms())
        await self.runtime.sleep_ms(self.waiting_ms)
        return results

    async def handle(self, payload: bytes, busy_ms: int) -> bytes | None:
        """Handle ``payload``, moving the clock by ``busy_ms`` while the handler sleeps."""
        task = asyncio.ensure_future(self.api.handle(payload))
        await until_idle()
        if self.handling_ms:  # the handler is in its sleep, to be ended by the clock moving
            assert self.runtime.sleeping() == [self.runtime.now + self.handling_ms]
        self.runtime.advance(busy_ms)
        return await asyncio.wait_for(task, 5)


async def test_the_handling_time_throttles_and_every_answer_carries_it() -> None:
    """CreateTopics handled in 105 ms: 500 ms (see the module). Metadata v9 and ApiVersions v3 at the same time
    (other connections), handled in no time: the rate is unchanged, so 500 ms too, written into their throttle
    field. 500 ms later the window counted is 10.5 s (the current sample's 0.5 s over the 10 windows): 10.5 / 10.5 s
    = 1 %, within the quota."""
    s = Setup()
    s.handling_ms = 105
    created = await s.handle(create_frame(6, "a"), 105)
    assert isinstance(created, ThrottledResponse)
    assert throttle_ms(decoded(created, CREATE_TOPICS, 6, "CreateTopicsResponse")) == 500

    meta = await s.api.handle(_frame(METADATA, 9, m_request()))
    assert isinstance(meta, ThrottledResponse)
    assert throttle_ms(decoded(meta, METADATA, 9, "MetadataResponse")) == 500
    m = schema_module(API_VERSIONS, 3, "request")
    versions = await s.api.handle(_frame(API_VERSIONS, 3, m.ApiVersionsRequest(
        client_software_name="t", client_software_version="1")))
    assert isinstance(versions, ThrottledResponse)
    assert throttle_ms(decoded(versions, API_VERSIONS, 3, "ApiVersionsResponse")) == 500

    await assert_sleeps_exactly(asyncio.ensure_future(created.throttle()), s.runtime, 500)
    within = await s.api.handle(_frame(METADATA, 9, m_request()))
    assert not isinstance(within, ThrottledResponse)
    assert throttle_ms(decoded(within, METADATA, 9, "MetadataResponse")) == 0  # type: ignore[arg-type]

    other = await s.api.handle(_frame(METADATA, 9, m_request(), client_id="free"))  # no quota for "free"
    assert not isinstance(other, ThrottledResponse)


async def test_an_unsupported_api_versions_is_throttled_too() -> None:
    """``handleApiVersionsRequest`` answers a version it lacks through ``sendResponseMaybeThrottle`` like any other:
    recorded, and muted for the client's throttle (500 ms after the 105 ms CreateTopics). The request is handled as
    v0 (``RequestContext.apiVersion``), so the answer, v0's layout, has no throttle field: error 35 and ApiVersions'
    own versions alone (``getErrorResponse``, KIP-511)."""
    s = Setup()
    s.handling_ms = 105
    await s.handle(create_frame(6, "a"), 105)
    answer = await s.api.handle(request_frame(API_VERSIONS, 4, 3, b"\x00\x00\x00", "c")[4:])
    assert isinstance(answer, ThrottledResponse)
    response = decoded(answer, API_VERSIONS, 0, "ApiVersionsResponse")
    assert int(response.error_code) == 35
    assert [(k.api_key, k.min_version, k.max_version) for k in response.api_keys] == [(API_VERSIONS, 0, 3)]
    await assert_sleeps_exactly(asyncio.ensure_future(answer.throttle()), s.runtime, 500)


def m_request() -> Any:
    m = schema_module(METADATA, 9, "request")
    return m.MetadataRequest(topics=(), allow_auto_topic_creation=False, include_cluster_authorized_operations=False,
                             include_topic_authorized_operations=False)


async def test_the_wait_after_the_local_completion_is_not_handling_time() -> None:
    """5 ms of handling then 5 s of waiting for leaders: 0.5 % over 10 s is 0.05 %/s, within 1 %: no throttle."""
    s = Setup()
    s.handling_ms, s.waiting_ms = 5, 5_000
    task = asyncio.ensure_future(s.api.handle(create_frame(6, "a")))
    await until_idle()
    assert s.runtime.sleeping() == [T0 + 5]  # handling
    s.runtime.advance(5)
    await until_idle()
    assert s.runtime.sleeping() == [T0 + 5 + 5_000]  # waiting for the leaders, after the local completion
    s.runtime.advance(5_000)
    answer = await asyncio.wait_for(task, 5)
    assert not isinstance(answer, ThrottledResponse)
    assert throttle_ms(decoded(answer, CREATE_TOPICS, 6, "CreateTopicsResponse")) == 0  # type: ignore[arg-type]


async def test_the_larger_of_the_request_and_mutation_throttles() -> None:
    """Mutation quota 2/s (burst 22): 30 partitions leave -8 tokens; the next CreateTopics is refused with
    8 / 2 s = 4000 ms, more than the request quota's 500 ms (105 ms handling): the answer carries 4000. With the
    mutation quota looser (100/s), the request quota's 500 ms is the larger and is written over the 0."""
    s = Setup()
    s.mutations.update_quota(None, "c", 2.0)
    m = schema_module(CREATE_TOPICS, 6, "request")
    big = _frame(CREATE_TOPICS, 6, m.CreateTopicsRequest(
        topics=(m.CreatableTopic(name="a", num_partitions=30, replication_factor=1, assignments=(), configs=()),),
        timeout=timedelta(seconds=1), validate_only=False))
    first = await s.handle(big, 0)
    assert not isinstance(first, ThrottledResponse)
    s.handling_ms = 105
    refused = await s.handle(create_frame(6, "b"), 105)
    assert isinstance(refused, ThrottledResponse)
    # the mutation throttle was computed 105 ms before the answer: 4000 - 105
    assert throttle_ms(decoded(refused, CREATE_TOPICS, 6, "CreateTopicsResponse")) == 3895

    s = Setup()
    s.mutations.update_quota(None, "c", 100.0)
    s.handling_ms = 105
    answer = await s.handle(create_frame(6, "a"), 105)
    assert isinstance(answer, ThrottledResponse)
    assert throttle_ms(decoded(answer, CREATE_TOPICS, 6, "CreateTopicsResponse")) == 500


async def test_produce_takes_the_larger_throttle_and_acks_0_is_exempt(
        apis: tuple[KafkaApis, Replicas]) -> None:  # noqa: F811
    """Client "test" has already used 105 ms (10.5 % over 10 s: 1.05 %/s against 1 %): a Produce acks=1 handled in
    no time answers 500 ms; one with acks=0 is exempt: no answer, no mute."""
    api, replicas = apis
    requests = ClientRequestQuotaManager(replicas.runtime)  # type: ignore[arg-type]
    api.request_quotas = lambda: requests
    requests.update_quota(None, "test", 1.0)
    requests.maybe_record_request(ANONYMOUS, "test", 105)
    payload = await api.handle(frame(9, 1, [("orders", [(0, batch(1))])]))
    assert isinstance(payload, ThrottledResponse)
    _, offset = decode_response_header(payload, PRODUCE, 9)
    assert int(codec.decode(PRODUCE_RESPONSE, 9, payload, offset)["throttle_time_ms"]) == 500
    assert await api.handle(frame(9, 0, [("orders", [(0, batch(1))])])) is None


async def test_an_acks_all_wait_is_not_handling_time(apis: tuple[KafkaApis, Replicas]) -> None:  # noqa: F811
    """acks=-1 waiting 1 s for its followers (here until its timeout): DelayedProduce's wait, not handling time,
    so nothing above the quota of 1 % (1 s would be 100 % over 10 s, 10 %/s: throttled)."""
    api, replicas = apis
    requests = ClientRequestQuotaManager(replicas.runtime)  # type: ignore[arg-type]
    api.request_quotas = lambda: requests
    requests.update_quota(None, "test", 1.0)
    task = asyncio.ensure_future(api.handle(frame(9, -1, [("orders", [(0, batch(1))])], timeout_ms=1_000)))
    for _ in range(50):
        if replicas.waiters.waiting() == 1:
            break
        await asyncio.sleep(0)
    assert replicas.waiters.waiting() == 1
    replicas.runtime.advance(1_000)
    payload = await asyncio.wait_for(task, 5)
    assert payload is not None and not isinstance(payload, ThrottledResponse)
    _, offset = decode_response_header(payload, PRODUCE, 9)
    assert int(codec.decode(PRODUCE_RESPONSE, 9, payload, offset)["throttle_time_ms"]) == 0
