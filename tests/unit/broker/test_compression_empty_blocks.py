"""Blocks and chunks that inflate to nothing (an lz4 block holding only the token 0, a xerial chunk holding a
raw snappy block of length 0) are skipped a run at a time: a request of them never reached the inflation limit and
was read one block at a time on the event loop (a fresh 4 MiB buffer per lz4 block: about 9 s per 100 KB). The
answers are those of reading them one by one: nothing added, a wrong checksum or a cut still refused."""

from __future__ import annotations

import struct

import cramjam
import pytest
from tests.unit.broker.test_legacy_compression import xerial

from zkcontroller.protocol.wire import compression
from zkcontroller.protocol.wire.compression import LZ4, SNAPPY, CompressionError, decompress, xxh32

EMPTY_BLOCK = b"\x00"
DATA = bytes(range(256)) * 300


def lz4_frame(pieces: list[bytes], *, block_checksums: bool, wrong_checksum_at: int | None = None) -> bytes:
    """An LZ4 frame (4 MiB blocks) of one compressed block per piece: ``EMPTY_BLOCK`` as it is, data compressed."""
    descriptor = bytes([0x60 | (0x10 if block_checksums else 0), 0x70])
    out = [struct.pack("<I", compression.LZ4_FRAME_MAGIC) + descriptor + bytes([(xxh32(descriptor) >> 8) & 0xFF])]
    for i, piece in enumerate(pieces):
        block = piece if piece == EMPTY_BLOCK else bytes(cramjam.lz4.compress_block(piece, store_size=False))
        checksum = xxh32(block) ^ (1 if i == wrong_checksum_at else 0)
        out.append(struct.pack("<I", len(block)) + block + (struct.pack("<I", checksum) if block_checksums else b""))
    return b"".join(out) + b"\0\0\0\0"


@pytest.mark.parametrize("block_checksums", [False, True])
def test_empty_lz4_blocks_among_others_add_nothing(block_checksums: bool) -> None:
    pieces = [EMPTY_BLOCK] * 1000 + [DATA[:1000]] + [EMPTY_BLOCK] * 3 + [DATA[1000:]] + [EMPTY_BLOCK]
    assert decompress(LZ4, lz4_frame(pieces, block_checksums=block_checksums), 2, len(DATA)) == DATA
    assert decompress(LZ4, lz4_frame([EMPTY_BLOCK] * 20_000, block_checksums=block_checksums), 2, 16_384) == b""


def test_an_empty_lz4_block_with_a_wrong_checksum_is_still_refused() -> None:
    frame = lz4_frame([EMPTY_BLOCK] * 10, block_checksums=True, wrong_checksum_at=6)
    with pytest.raises(CompressionError, match="checksum mismatch"):
        decompress(LZ4, frame, 2, 16_384)


def test_empty_lz4_blocks_without_the_end_mark_are_cut_short() -> None:
    frame = lz4_frame([EMPTY_BLOCK] * 50, block_checksums=False)[:-4]
    with pytest.raises(CompressionError, match="Stream ended prematurely"):
        decompress(LZ4, frame, 2, 16_384)


def test_empty_snappy_chunks_among_others_add_nothing() -> None:
    empty = struct.pack(">i", 1) + b"\x00"
    stream = xerial(DATA[:5000]) + empty * 1000 + xerial(DATA[5000:])[compression.XERIAL_HEADER_SIZE:] + empty
    assert decompress(SNAPPY, stream, 2, len(DATA)) == DATA
    assert decompress(SNAPPY, xerial(b"")[:compression.XERIAL_HEADER_SIZE] + empty * 200_000, 2, 16_384) == b""


def test_empty_snappy_chunks_then_a_cut_length_end_the_stream_and_a_cut_chunk_is_refused() -> None:
    """snappy-java's ``hasNextChunk`` ends the stream at fewer than 4 bytes of a chunk length (ignored), and fails
    a chunk cut short."""
    stream = xerial(b"")[:compression.XERIAL_HEADER_SIZE] + (struct.pack(">i", 1) + b"\x00") * 100
    assert decompress(SNAPPY, stream + b"\x00\x00", 2, 16_384) == b""
    with pytest.raises(CompressionError, match="failed to read chunk"):
        decompress(SNAPPY, stream + struct.pack(">i", 5) + b"\x00", 2, 16_384)
