"""A malformed record after the record errors that settle a v2 batch's answer: Kafka 2.8's LogValidator keeps
reading (``forEachRemaining`` over every record, LogValidator.scala 415 compressed, ``batch.forEach`` 295
uncompressed) and its reader's exception escapes before ``processRecordErrors`` (443, 307) is reached: the
exception is the answer, with no record errors. So once `RECORD_ERRORS_KEPT` record errors settle the answer, the
rest of the batch is still read for its structure (by `v2_well_formed`; the record walk builds no more texts).

Before, the walk stopped at the 1,000th record error and the batch was refused with them."""

from __future__ import annotations

import pytest
from tests.unit.broker.v2_batches import LOG_APPEND_TIME, NONE, ZSTD, count_walked_records, refusal, v2_batch, v2_record

from zkcontroller.protocol.wire.record_errors import RECORD_ERRORS_KEPT
from zkcontroller.protocol.wire.record_sets import INVALID_RECORD, INVALID_TIMESTAMP

MANY = 5_000
MALFORMED = bytes([0x0C, 0, 0, 0, 0xC8, 0x01, 0x01, 0])
"""Length 6, a key length of 100 in a 6-byte body."""
READER = (INVALID_RECORD, "org.apache.kafka.common.InvalidRecordException", ())


def keyless(n: int) -> list[bytes]:
    return [v2_record(i, None) for i in range(n)]


def answer(data: bytes, **checks: object) -> tuple[object, ...]:
    e = refusal(data, **checks)
    return e.error, e.exception, e.record_errors


@pytest.mark.parametrize("codec", [ZSTD, NONE])
def test_a_malformed_record_after_a_compacted_topics_settled_key_errors_is_the_answer(codec: int) -> None:
    data = v2_batch(b"".join(keyless(MANY)) + MALFORMED, MANY + 1, codec=codec)
    assert answer(data, compacted=True) == READER
    data = v2_batch(b"".join(keyless(MANY)), MANY + 1, codec=codec)  # a record missing: premature EOF
    e = refusal(data, compacted=True)
    assert (e.error, str(e), e.record_errors) == (INVALID_RECORD, "Incorrect declared batch size, premature EOF "
                                                                  "reached", ())


@pytest.mark.parametrize("codec", [ZSTD, NONE])
def test_a_malformed_record_after_settled_timestamp_errors_is_the_answer(codec: int) -> None:
    keyed = b"".join(v2_record(i) for i in range(MANY))
    data = v2_batch(keyed + MALFORMED, MANY + 1, codec=codec, attributes=LOG_APPEND_TIME)
    assert answer(data) == READER
    out_of_range = b"".join(v2_record(i, timestamp_delta=-10_000) for i in range(MANY))
    data = v2_batch(out_of_range + MALFORMED, MANY + 1, codec=codec)
    assert answer(data, timestamp_difference_max_ms=1_000) == READER


def test_a_well_formed_rest_keeps_the_settled_answer_and_its_texts_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """The record walk (counted as it hands records out) still stops at the 1,000th record error; the structure
    read covers the rest."""
    read = count_walked_records(monkeypatch)
    e = refusal(v2_batch(b"".join(keyless(MANY)), MANY, codec=ZSTD), compacted=True)
    assert (e.error, len(e.record_errors), len(read)) == (INVALID_RECORD, RECORD_ERRORS_KEPT, RECORD_ERRORS_KEPT)
    read.clear()
    e = refusal(v2_batch(b"".join(v2_record(i) for i in range(MANY)), MANY, codec=ZSTD, attributes=LOG_APPEND_TIME))
    assert (e.error, len(e.record_errors), len(read)) == (INVALID_TIMESTAMP, RECORD_ERRORS_KEPT, RECORD_ERRORS_KEPT)
