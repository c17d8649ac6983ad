"""Benchmark (not a test): a Produce record set whose one record carries millions of headers and is malformed at its
end, checked as the broker's worker checks it (`log_validator.validate`, a zstd batch kept in place, so Kafka's
``readPartiallyFrom`` is what names the refusal), against the floor of one structural walk of the same bytes
(`v2_records.v2_well_formed`, which every accepted batch of the default configs pays).

    uv run python bench/bench_header_bomb.py                    # 1M and 4M headers
    uv run python bench/bench_header_bomb.py --headers 16000000

Prints, per size: the inflated bytes, the whole check's seconds, the floor's, their ratio, the answer, and the
longest stretch between two ``cancelled()`` calls (how long a cancelled request's walk can go on); never fails on
time.
"""

from __future__ import annotations

import argparse
import itertools
import struct
import time

import cramjam

from zkcontroller.protocol.wire.log_validator import validate
from zkcontroller.protocol.wire.record_sets import RecordSetError, crc32c, inspect
from zkcontroller.protocol.wire.v2_records import v2_well_formed


def varint(value: int) -> bytes:
    raw = (value << 1) ^ (value >> 63)
    out = bytearray()
    while raw >= 0x80:
        out.append(raw & 0x7F | 0x80)
        raw >>= 7
    out.append(raw)
    return bytes(out)


def bomb_records(headers: int) -> bytes:
    """One record with ``headers`` headers (an empty key, a null value each), its length one byte past them (and
    that byte present): malformed only at its very end."""
    body = bytes([0]) + varint(0) + varint(0) + varint(-1) + varint(-1) + varint(headers) + b"\x00\x01" * headers
    return varint(len(body) + 1) + body + b"\x00"


def zstd_batch(records: bytes, count: int = 1) -> bytes:
    c = cramjam.zstd.Compressor()
    c.compress(records)
    head = struct.pack(">qiibIhiqqqhii", 0, 0, 0, 2, 0, 4, count - 1, 1_000, 1_000, -1, -1, -1, count)
    out = bytearray(head + bytes(c.finish()))
    struct.pack_into(">i", out, 8, len(out) - 12)
    struct.pack_into(">I", out, 17, crc32c(bytes(out[21:])))
    return bytes(out)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--headers", default="1000000,4000000")
    args = parser.parse_args()
    print(f"{'headers':>10} {'inflated':>10} {'check s':>8} {'floor s':>8} {'ratio':>6} {'max gap s':>9}  answer")
    for headers in (int(h) for h in args.headers.split(",")):
        records = bomb_records(headers)
        data = zstd_batch(records)
        entries = inspect(data, 9)
        calls: list[float] = []

        def cancelled(calls: list[float] = calls) -> bool:
            calls.append(time.perf_counter())
            return False
        start = time.perf_counter()
        try:
            validate(data, entries, None, "t-0", cancelled=cancelled)
            answer = "accepted"
        except RecordSetError as e:
            answer = f"{e.error} {e}"
        end = time.perf_counter()
        stamps = [start, *calls, end]
        gap = max(b - a for a, b in itertools.pairwise(stamps))
        start_floor = time.perf_counter()
        v2_well_formed(records, 1)
        floor = time.perf_counter() - start_floor
        print(f"{headers:>10} {len(records):>10} {end - start:>8.2f} {floor:>8.2f} {(end - start) / floor:>6.1f} "
              f"{gap:>9.2f}  {answer[:90]}")



if __name__ == "__main__":
    main()
