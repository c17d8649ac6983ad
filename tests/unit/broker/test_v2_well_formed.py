"""`v2_records.v2_well_formed`, the structure-only read of a v2 batch's records (the default topic configs),
agrees with `walk_v2_records` on every input: well-formed exactly where the walk finds no malformed record.
Fuzzed from real batches (kafka-python's builder: keys, values, headers of every varint width), cut, grown and
with bytes changed, and from raw bytes."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record.memory_records import MemoryRecordsBuilder

from zkcontroller.protocol.wire import record_sets, v2_records
from zkcontroller.protocol.wire.record_sets import RECORD_BATCH_OVERHEAD
from zkcontroller.protocol.wire.v2_records import walk_v2_records


def _walk_says_well_formed(records: bytes, count: int) -> bool:
    return not any(isinstance(r, v2_records.Malformed) for r in walk_v2_records(records, count))


_blob = st.one_of(st.none(), st.binary(max_size=300))
_record = st.tuples(st.integers(-(1 << 40), 1 << 40), _blob, _blob,
                    st.lists(st.tuples(st.text(max_size=20), st.one_of(st.none(), st.binary(max_size=200))),
                             max_size=3))


def _records_part(records: list[tuple[int, bytes | None, bytes | None, list[tuple[str, bytes | None]]]]) -> bytes:
    builder = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 24)
    for ts, key, value, headers in records:
        builder.append(timestamp=(1 << 40) + ts, key=key, value=value, headers=headers)
    builder.close()
    return bytes(builder.buffer())[RECORD_BATCH_OVERHEAD:]


@settings(max_examples=400, deadline=None)
@given(st.lists(_record, min_size=1, max_size=12), st.data())
def test_agrees_with_the_walk_on_real_and_damaged_batches(records: list, data: st.DataObject) -> None:
    body = bytearray(_records_part(records))
    count = len(records)
    assert v2_records.v2_well_formed(bytes(body), count) and _walk_says_well_formed(bytes(body), count)
    damage = data.draw(st.sampled_from(["byte", "cut", "grow", "count"]))
    if damage == "byte":
        body[data.draw(st.integers(0, len(body) - 1))] = data.draw(st.integers(0, 255))
    elif damage == "cut":
        del body[data.draw(st.integers(0, len(body) - 1)):]
    elif damage == "grow":
        body += data.draw(st.binary(min_size=1, max_size=20))
    else:
        count = data.draw(st.integers(-2, count + 3))
    assert v2_records.v2_well_formed(bytes(body), count) == _walk_says_well_formed(bytes(body), count)


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=200), st.integers(-1, 40))
def test_agrees_with_the_walk_on_raw_bytes(body: bytes, count: int) -> None:
    assert v2_records.v2_well_formed(body, count) == _walk_says_well_formed(body, count)


def test_asks_cancelled_from_the_first_record() -> None:
    body = _records_part([(0, b"k", b"v", [])])
    with pytest.raises(record_sets.RecordSetError):
        v2_records.v2_well_formed(body, 1, lambda: True)
