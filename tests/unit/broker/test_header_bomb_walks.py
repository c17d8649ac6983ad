"""A malformed record with millions of headers: its refusal is the same as before the walks were made cheaper (the
reference below is the earlier ``_read_partially``, which copied up to 2 KiB of skip buffer per field), and a walk
no one waits for stops within 65,536 headers of a single record, in each of the three walks that read it. Counted,
never timed (bench/bench_header_bomb.py prints the times)."""

from __future__ import annotations

import random
import struct

import cramjam
import pytest
from tests.unit.broker.v2_batches import varint

from zkcontroller.protocol.wire import log_validator, v2_record_errors, v2_records
from zkcontroller.protocol.wire.log_validator import validate
from zkcontroller.protocol.wire.record_sets import (
    RecordSetError,
    crc32c,
    inspect,
)
from zkcontroller.protocol.wire.v2_record_errors import (
    _SKIP_BUFFER,
    _Eof,
    _Illegal,
    _Invalid,
    _invalid_record,
    _java_varint,
    _read_partially,
    _Underflow,
)
from zkcontroller.protocol.wire.v2_records import (
    v2_well_formed,
    walk_v2_records,
)


def reference(buf: bytes, at: int, limit: int, size: int) -> RecordSetError:
    """The earlier ``_read_partially`` (no stream failure), kept as the answer's reference."""
    window = b""
    stream = at
    remaining = size

    def more() -> None:
        nonlocal window, stream, remaining
        if remaining <= 0:
            raise _Invalid("Invalid record size: expected to read more bytes in record payload")
        n = min(remaining, _SKIP_BUFFER - len(window))
        if limit - stream < n:
            raise _Eof
        window += bytes(buf[stream:stream + n])
        stream += n
        remaining -= n

    def varint(long: bool = False) -> int:
        nonlocal window
        if len(window) < (10 if long else 5) and remaining > 0:
            more()
        value, used = _java_varint(window, 0, len(window), long)
        window = window[used:]
        return value

    def skip_field() -> int:
        nonlocal window
        if len(window) < 5 and remaining > 0:
            more()
        n = varint()
        left = n
        while left > 0:
            if left > len(window):
                left -= len(window)
                window = b""
                more()
            else:
                window = window[left:]
                left = 0
        return n

    try:
        if not window and remaining > 0:
            more()
        if not window:
            raise _Underflow
        window = window[1:]
        varint(long=True)
        varint()
        skip_field()
        skip_field()
        headers = varint()
        if headers < 0:
            raise _Invalid(f"Found invalid number of record headers {headers}")
        for _ in range(headers):
            key = skip_field()
            if key < 0:
                raise _Invalid(f"Invalid negative header key size {key}")
            skip_field()
        if remaining > 0 or window:
            raise _Invalid(f"Invalid record size: expected to read {size} bytes in record payload, but there are "
                           "still bytes remaining")
    except (_Underflow, _Illegal):
        return _invalid_record("Found invalid record structure")
    except _Eof:
        return _invalid_record("Incorrect declared batch size, premature EOF reached")
    except _Invalid as thrown:
        return _invalid_record(str(thrown))
    return _invalid_record("Found invalid record structure")


def random_body(rng: random.Random) -> bytes:
    """A record body (attributes on), often well formed, often not: lengths off, negative counts, long fields."""
    out = bytearray([0]) + varint(rng.choice([0, 5, -3, 1 << 40])) + varint(rng.choice([0, 1, 300]))
    for _ in (0, 1):
        n = rng.choice([-1, 0, 1, 3, 70, 3000])
        out += varint(n) + bytes(rng.randrange(256) for _ in range(max(n, 0) if rng.random() < 0.9 else 2))
    headers = rng.choice([0, 1, 2, 5, 40, 1200, -2])
    out += varint(headers)
    for _ in range(max(headers, 0)):
        k = rng.choice([0, 1, 4, 200, -1]) if rng.random() < 0.97 else 1 << 33
        out += varint(k) + bytes(max(0, min(k, 300)))
        v = rng.choice([-1, 0, 2, 90, 2500])
        out += varint(v) + bytes(max(v, 0))
    if rng.random() < 0.3:
        cut = rng.randrange(len(out) + 1)
        out = out[:cut]
    return bytes(out) + bytes(rng.randrange(4))


def test_the_refusal_is_the_references_on_random_records() -> None:
    rng = random.Random(2026)
    for _ in range(1500):
        body = random_body(rng)
        for size in (len(body), len(body) - 1, len(body) + 3, rng.randrange(len(body) + 5)):
            for limit in (len(body), rng.randrange(len(body) + 1)):
                got = _read_partially(body, 0, limit, size)
                want = reference(body, 0, limit, size)
                assert (got.error, str(got), got.exception) == (want.error, str(want), want.exception), (body, size,
                                                                                                      limit)


def bomb(headers: int) -> bytes:
    body = bytes([0]) + varint(0) + varint(0) + varint(-1) + varint(-1) + varint(headers) + b"\x00\x01" * headers
    return varint(len(body) + 1) + body + b"\x00"


def zstd_batch(records: bytes) -> bytes:
    c = cramjam.zstd.Compressor()
    c.compress(records)
    head = struct.pack(">qiibIhiqqqhii", 0, 0, 0, 2, 0, 4, 0, 1_000, 1_000, -1, -1, -1, 1)
    out = bytearray(head + bytes(c.finish()))
    struct.pack_into(">i", out, 8, len(out) - 12)
    struct.pack_into(">I", out, 17, crc32c(bytes(out[21:])))
    return bytes(out)


HEADERS = 300_000


def test_the_bombs_answer() -> None:
    data = zstd_batch(bomb(HEADERS))
    with pytest.raises(RecordSetError) as e:
        validate(data, inspect(data, 9), None, "t-0")
    assert str(e.value) == (f"Invalid record size: expected to read {2 * HEADERS + 9} bytes in record payload, but "
                            "there are still bytes remaining")


@pytest.mark.parametrize("walk", ["well_formed", "walk", "read_partially", "validate"])
def test_a_cancelled_walk_stops_within_65536_headers(walk: str) -> None:
    records = bomb(HEADERS)
    asked: list[int] = []

    def cancelled() -> bool:
        asked.append(1)
        return len(asked) >= 2  # the first ask (at the walk's start) passes, the next stops it

    with pytest.raises(RecordSetError, match="cancelled"):
        if walk == "well_formed":
            v2_well_formed(records, 1, cancelled)
        elif walk == "walk":
            list(walk_v2_records(records, 1, cancelled))
        elif walk == "read_partially":
            size, at = _java_varint(records, 0, len(records))
            error = _read_partially(records, at, len(records), size, cancelled=cancelled)
            raise AssertionError(f"not cancelled: {error}")
        else:
            data = zstd_batch(records)
            validate(data, inspect(data, 9), None, "t-0", cancelled=cancelled)
    assert len(asked) == 2  # before: asked once per record, so never again in a one-record walk


def test_the_fast_walk_says_where_the_record_is_malformed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The structure-only walk gives where it found the record malformed, so the full walk does not read the
    record's headers a second time: two reads of them in all (that walk's and ``readPartiallyFrom``'s)."""
    walked: list[int] = []
    real = v2_records.walk_v2_records

    def counted(*args: object, **kwargs: object) -> object:
        walked.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]
    for module in (log_validator, v2_records, v2_record_errors):  # every caller of the walk
        monkeypatch.setattr(module, "walk_v2_records", counted)
    data = zstd_batch(bomb(1000))
    with pytest.raises(RecordSetError, match="still bytes remaining"):
        validate(data, inspect(data, 9), None, "t-0")
    assert walked == []  # before: walked once more to find the malformed record
