"""Builders of a client's v2 record batch, byte by byte, for the record-set tests (`log_validator.validate`): records
malformed on purpose, offset deltas out of order, a CRC always right. One copy, so the tests that read batches
malformed in different ways build them the same way."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Any

import cramjam
import pytest

from zkcontroller.protocol.wire import log_validator, v2_record_errors, v2_records
from zkcontroller.protocol.wire.log_validator import validate
from zkcontroller.protocol.wire.record_sets import RecordSetError, crc32c, inspect

NOW = 1_700_000_000_000
"""The broker's clock in these tests (``now_ms``)."""
NONE, GZIP, ZSTD = 0, 1, 4
LOG_APPEND_TIME = 0x08
"""A batch's attributes bit a producer may not set."""
KAFKA_EXCEPTION = "org.apache.kafka.common.KafkaException"
INVALID = "org.apache.kafka.common.InvalidRecordException"
"""The exception classes a refusal names (`refused`'s third field): a stream failure's, a malformed record's."""


def varint(value: int) -> bytes:
    """``ByteUtils.writeVarlong``: zig-zag, 7 bits a byte (a varint's bytes for any int32)."""
    raw = (value << 1) ^ (value >> 63)
    out = bytearray()
    while raw >= 0x80:
        out.append(raw & 0x7F | 0x80)
        raw >>= 7
    out.append(raw)
    return bytes(out)


def v2_record(offset_delta: int = 0, key: bytes | None = b"k", *, timestamp_delta: int = 0,
              key_length: int | None = None, length_delta: int = 0) -> bytes:
    """A DefaultRecord with a null value and no headers; ``key_length`` overrides the key's length field (the key's
    bytes stay), ``length_delta`` is added to the record's own length."""
    n = (len(key) if key is not None else -1) if key_length is None else key_length
    body = (bytes([0]) + varint(timestamp_delta) + varint(offset_delta) + varint(n) + (key or b"") + varint(-1)
            + varint(0))
    return varint(len(body) + length_delta) + body


def zstd(payload: bytes) -> bytes:
    """A zstd frame as zstd-jni's stream writes it (no content size)."""
    c = cramjam.zstd.Compressor()
    c.compress(payload)
    return bytes(c.finish())


def v2_batch(payload: bytes, count: int, *, codec: int = NONE, attributes: int = 0, first_timestamp: int = NOW,
             max_timestamp: int = NOW) -> bytes:
    """A client's v2 batch (base offset 0, no producer id) of ``count`` records around ``payload`` (the records
    part, compressed here with ``codec``: zstd or gzip), its last offset delta ``count - 1``, its size and CRC
    right."""
    if codec == ZSTD:
        payload = zstd(payload)
    elif codec == GZIP:
        payload = bytes(cramjam.gzip.compress(payload))
    return stream_batch(payload, count, codec | attributes, first_timestamp, max_timestamp)


def stream_batch(stream: bytes, count: int, attributes: int, first_timestamp: int = 1_000,
                 max_timestamp: int = 1_000) -> bytes:
    """A client's v2 batch of ``count`` records whose records part is ``stream`` as given (a codec's stream built
    or damaged by the test, its codec in ``attributes``), its size and CRC right."""
    head = struct.pack(">qiibIhiqqqhii", 0, 0, 0, 2, 0, attributes, count - 1, first_timestamp, max_timestamp, -1,
                       -1, -1, count)
    out = bytearray(head + stream)
    struct.pack_into(">i", out, 8, len(out) - 12)
    struct.pack_into(">I", out, 17, crc32c(bytes(out[21:])))
    return bytes(out)


def refusal(data: bytes, version: int = 9, **checks: object) -> RecordSetError:
    """`validate`'s refusal of ``data`` for partition ``orders-0`` at `NOW` (``checks``: its keyword arguments);
    the test fails if it is accepted."""
    checks.setdefault("now_ms", NOW)
    with pytest.raises(RecordSetError) as e:
        validate(data, inspect(data, version), None, "orders-0", **checks)  # type: ignore[arg-type]
    return e.value


def refused(data: bytes, version: int = 9, **checks: object) -> tuple[int, str, str | None]:
    """`refusal` as (error code, message, exception class): what the codec stream tests compare."""
    e = refusal(data, version, **checks)
    return e.error, str(e), e.exception


def accepted(data: bytes, version: int = 9, **checks: object) -> int:
    """`validate`'s count for an accepted ``data`` (partition ``orders-0``, at `NOW`)."""
    checks.setdefault("now_ms", NOW)
    return validate(data, inspect(data, version), None, "orders-0", **checks)  # type: ignore[arg-type]


def numbered(record: bytes, n: int) -> bytes:
    """``n`` copies of the smallest kind of ``record`` (a one-byte length, attributes, a one-byte timestamp delta,
    then its offset delta), each with its index as its offset delta, as a producer numbers them: what a compressed
    batch Kafka keeps in place must hold (`log_validator._skipped_key`). 7 bytes a record for the first 64, 8 up to
    8,192, 9 beyond (`numbered_size`)."""
    head, tail = record[1:3], record[4:]
    out = bytearray()
    for i in range(n):
        z = i << 1
        delta = bytes((z,)) if z < 0x80 else bytes((z & 0x7F | 0x80, z >> 7)) if z < 0x4000 else varint(i)
        out += bytes((len(head) + len(delta) + len(tail) << 1,)) + head + delta + tail
    return bytes(out)


def numbered_size(record: bytes, n: int) -> int:
    """The bytes of `numbered` (``record``, ``n``)."""
    base = len(record)
    return base * n + max(0, min(n, 8192) - 64) + 2 * max(0, n - 8192)


def v2_batch_of(records: list[bytes], **kwargs: Any) -> bytes:
    """`v2_batch` of ``records`` (each a whole record: `v2_record`), counted."""
    return v2_batch(b"".join(records), len(records), **kwargs)


def count_walked_records(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the records ``v2_records.walk_v2_records`` hands out (one entry each), so a test can see where the
    record walk stopped; the list is the caller's to clear between batches."""
    read: list[int] = []
    real_walk = v2_records.walk_v2_records

    def counted(records: bytes | memoryview, count: int, *more: Any) -> Iterator[Any]:
        for r in real_walk(records, count, *more):
            read.append(1)
            yield r
    for module in (log_validator, v2_records, v2_record_errors):  # every caller of the walk
        monkeypatch.setattr(module, "walk_v2_records", counted)
    return read
