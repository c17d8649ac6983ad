"""Opening the value of a compressed legacy (magic 0/1) wrapper message, as Kafka 2.8's
``CompressionType.wrapForInput`` reads it for offset assignment (``LogValidator``, magic < 2):

* gzip (1): one or more gzip members, as ``java.util.zip.GZIPInputStream`` (Kafka's 8 KiB input buffer) reads them
  (`_gunzip`): its own header parser (reserved flag bits ignored, unlike zlib's), raw deflate through `zlib`, its
  trailer check, and its rule for a next member: one is looked for only when more than 26 bytes of the 8 KiB input
  chunk holding a member's end follow that end (``readTrailer``; Kafka's ``ByteBufferInputStream`` reports nothing
  available beyond the chunk), and bytes that are not a gzip header there are ignored. A stream Java would fail on
  (not gzip, cut short, a corrupt block or trailer) is `StreamFailure`, carrying the bytes inflated before the
  failure and Java's exception, so a reader can fail where Kafka's would.
* snappy (2): snappy-java 1.1.8.1's ``SnappyInputStream`` (`_snappy`): the xerial stream (the 8-byte
  ``\\x82SNAPPY\\0`` marker, two int32 version fields, then chunks of an int32 length and a raw snappy block,
  concatenated streams' headers among them), or, when the marker is absent, the whole value as one raw snappy
  block (what that stream falls back to), with its failures where it meets them (`StreamFailure`).
* lz4 (3): an LZ4 frame, as Kafka's ``KafkaLZ4BlockInputStream`` reads it (`_lz4_header`, `_lz4_frame`): frame
  version 1, independent blocks, no reserved bits (so no dictionary id), a block maximum size of 64 KiB to 4 MiB,
  the header checksum (the second byte of the descriptor's xxHash32) checked except for magic 0, whose old writers
  computed it wrongly, each block no larger than the maximum, block checksums checked when flagged, the content
  checksum read but not verified (as Kafka), nothing read after it. Where Java fails is `StreamFailure` (in its
  order, with its exception), the content before it kept, so a reader fails where Kafka's would.
* zstd (4, v2 batches only: a legacy zstd wrapper is refused before it is opened): one or more zstd frames, as
  zstd-jni's ``ZstdInputStream`` reads them; where they do not decode whole, what that stream gives before its
  failure (`_zstd_frames`, `StreamFailure`).

Raw snappy and LZ4 blocks and zstd frames are decoded by ``cramjam`` and xxHash32 computed by ``xxhash`` (both in
C, so a large request does not hold the event loop); no reader produces more than ``limit`` bytes (a small request
cannot fill the memory). Anything unreadable is `CompressionError` (`StreamFailure`: where Kafka's reader fails, and
how); a value inflating beyond ``limit`` `InflationLimitExceeded` (one), so a caller can probe whether a value
inflates beyond a small limit.
"""

from __future__ import annotations

import bisect
import re
import struct
import zlib
from collections.abc import Callable, Iterator

import cramjam
import xxhash

GZIP, SNAPPY, LZ4, ZSTD = 1, 2, 3, 4
XERIAL_MAGIC = b"\x82SNAPPY\x00"
XERIAL_HEADER_SIZE = 16
LZ4_FRAME_MAGIC = 0x184D2204
_LZ4_BLOCK_MAX = {4: 1 << 16, 5: 1 << 18, 6: 1 << 20, 7: 1 << 22}
_LZ4_UNCOMPRESSED = 0x80000000
_ZSTD_FIRST_BUFFER = 64 * 1024
_ZSTD_FULL = "failed to write whole buffer"
"""cramjam's error when ``decompress_into``'s buffer is full (its only other failure: an unreadable stream)."""


_EMPTY_SNAPPY_CHUNKS = re.compile(rb"(?:\x00\x00\x00\x01\x00)+")
"""A run of xerial chunks each one raw snappy block of length 0: they add nothing and never reach the limit, so one
at a time in Python a 100 MiB request of them held the event loop for about a minute."""


_EMPTY_LZ4_BLOCK = b"\x01\x00\x00\x00\x00"
"""An lz4 block of one byte, the token 0 (no literals, no match): the one compressed block that inflates to nothing."""
_EMPTY_LZ4_BLOCKS = re.compile(b"(?:" + re.escape(_EMPTY_LZ4_BLOCK) + b")+")
_EMPTY_LZ4_BLOCKS_CHECKED = re.compile(
    b"(?:" + re.escape(_EMPTY_LZ4_BLOCK + struct.pack("<I", xxhash.xxh32_intdigest(b"\x00"))) + b")+")
"""The same, each with its block checksum (a frame that flags them)."""


class Lz4Content(bytes):
    """An lz4 frame's content when some of its blocks inflate to nothing: ``empty_at`` the offsets in it where a
    read meets a run of them. Kafka's ``KafkaLZ4BlockInputStream.read()`` (one byte) reads the next block when its
    buffer is spent and, that block empty, throws ``BufferUnderflowException``; its array reads (``readFully``) read
    on past such blocks. Plain ``bytes`` when there is none (every real producer's frame)."""

    empty_at: tuple[int, ...]


def _lz4_content(out: bytearray, empty_at: list[int]) -> bytes:
    if not empty_at:
        return bytes(out)
    content = Lz4Content(out)
    content.empty_at = tuple(empty_at)
    return content


class SnappyContent(bytes):
    """A snappy stream's content when it holds concatenated headers of another magic: ``soft_ends`` the offsets in
    it where one sits. snappy-java's ``hasNextChunk`` answers false there without marking the stream finished, so the
    one read call that meets it ends (-1 if it had read nothing: an end of stream for that read) and the next reads
    on past it. Plain ``bytes`` when there is none (every real producer's stream). `soft_end` says where a reader
    stops."""

    soft_ends: tuple[int, ...]


def _snappy_content(out: bytearray, soft_ends: list[int]) -> bytes:
    if not soft_ends:
        return bytes(out)
    content = SnappyContent(out)
    content.soft_ends = tuple(soft_ends)
    return content


def soft_end(content: SnappyContent, read_starts: Callable[[bytes], Iterator[int]]) -> int | None:
    """Where a reader whose read calls start at ``read_starts(content)`` (in order; each reads on to the next)
    meets the stream's end, whichever comes first: one of `SnappyContent.soft_ends` a read starts at (a read that
    meets one past its start returns short and the next reads on), or two or more at one offset inside a read (the
    next read starts there and meets the next one); None when it meets none (the content's own end, or the
    stream's failure, is then its end). Each read start costs a bisection, so crafted streams of many headers stay
    linear."""
    ends = frozenset(content.soft_ends)
    doubled = sorted({at for i, at in enumerate(content.soft_ends[1:]) if content.soft_ends[i] == at})
    last = content.soft_ends[-1]
    before = -1
    for at in read_starts(content):
        # a doubled end inside the previous read comes first: that read returned short there, the next met it
        k = bisect.bisect_right(doubled, before)
        if k < len(doubled) and doubled[k] < at:
            return doubled[k]
        if at in ends:
            return at
        if at > last:
            break
        before = at
    return None


class CompressionError(Exception):
    """A compressed value that cannot be read (or inflates beyond the limit)."""


class InflationLimitExceeded(CompressionError):
    """A compressed value that inflates beyond the limit it was read with."""


class StreamFailure(CompressionError):
    """A stream Kafka's reader fails on (gzip's ``GZIPInputStream``, lz4's ``KafkaLZ4BlockInputStream``):
    ``data`` is what it gives before (every byte a read returns before the one that throws), ``java`` the
    exception's ``toString`` ("java.util.zip.ZipException: Not in GZIP format", "java.io.IOException: Stream ended
    prematurely", ...); ``eof``: an ``EOFException`` (the stream cut short), which Kafka's record readers tell
    apart; ``at_open``: thrown by the constructor, reading the first header (``CompressionType.wrapForInput`` wraps
    it in a ``KafkaException``); ``unchecked``: not an ``IOException`` (lz4's ``BufferUnderflowException``), so no
    record reader wraps it: it escapes as itself. A corrupt deflate block is reported with no bytes of its member (a
    deliberate simplification: Java gives those its earlier 8 KiB input chunks inflated to, zlib's output of the
    failing call being lost in both)."""

    def __init__(self, data: bytes | bytearray, java: str, *, eof: bool = False, at_open: bool = False,
                 unchecked: bool = False) -> None:
        super().__init__(java)
        self.data = data
        self.java = java
        self.eof = eof
        self.at_open = at_open
        self.unchecked = unchecked


def decompress(codec: int, value: bytes, magic: int, limit: int, *, partial: bool = False) -> bytes | bytearray:
    """The inner message set of a wrapper, or the records of a v2 batch, compressed with ``codec`` (gzip, snappy,
    lz4 or zstd); at most ``limit`` bytes (`InflationLimitExceeded` beyond). ``partial``: a value inflating beyond
    ``limit`` gives its first ``limit`` bytes instead (at most: a snappy block is whole or not at all, so a single
    block beyond ``limit`` is still `InflationLimitExceeded`), for a reader that needs only the first records.
    zstd gives its own buffer (a bytearray: not copied again)."""
    try:
        if codec == GZIP:
            return _gunzip(value, limit, partial)
        if codec == SNAPPY:
            return _snappy(value, limit, partial)
        if codec == LZ4:
            return _lz4_frame(value, ignore_header_checksum=magic == 0, limit=limit, partial=partial)
        if codec == ZSTD:
            return _zstd(value, limit, partial)
    except cramjam.DecompressionError as e:
        raise CompressionError(str(e)) from None
    raise CompressionError(f"compression codec {codec} is not read here")


_GZIP_INPUT_BUFFER = 8 * 1024
"""The input buffer Kafka gives ``GZIPInputStream`` (``CompressionType.GZIP.wrapForInput``): the chunk a member's
end is found in decides whether a next member is looked for (`_gunzip`)."""
_GZIP_MAGIC = 0x8B1F
_FHCRC, _FEXTRA, _FNAME, _FCOMMENT = 2, 4, 8, 16
_EOF = "java.io.EOFException"
_ZIP = "java.util.zip.ZipException"


class _JavaIOError(Exception):
    """An ``IOException`` of ``GZIPInputStream.readHeader``/``readTrailer`` (its ``toString``)."""

    def __init__(self, java: str, eof: bool) -> None:
        super().__init__(java)
        self.java = java
        self.eof = eof


def _gzip_header(value: bytes | memoryview, pos: int) -> int:
    """``GZIPInputStream.readHeader`` of the header at ``pos``: where it ends; `_JavaIOError` as Java fails (magic,
    method, a header CRC that differs, ``EOFException`` when cut short). Reserved flag bits are not checked, as in
    Java (zlib refuses them)."""
    end = len(value)

    def need(n: int) -> None:
        if pos + n > end:
            raise _JavaIOError(_EOF, True)

    start = pos
    need(2)
    if value[pos] | value[pos + 1] << 8 != _GZIP_MAGIC:
        raise _JavaIOError(f"{_ZIP}: Not in GZIP format", False)
    need(3)
    if value[pos + 2] != 8:
        raise _JavaIOError(f"{_ZIP}: Unsupported compression method", False)
    need(4)
    flags = value[pos + 3]
    pos += 4
    need(6)  # MTIME, XFL, OS
    pos += 6
    if flags & _FEXTRA:
        need(2)
        extra = value[pos] | value[pos + 1] << 8
        pos += 2
        need(extra)
        pos += extra
    for flag in (_FNAME, _FCOMMENT):  # zero-terminated
        if flags & flag:
            while True:
                need(1)
                pos += 1
                if value[pos - 1] == 0:
                    break
    if flags & _FHCRC:
        need(2)
        if value[pos] | value[pos + 1] << 8 != zlib.crc32(value[start:pos]) & 0xFFFF:
            raise _JavaIOError(f"{_ZIP}: Corrupt GZIP header", False)
        pos += 2
    return pos


_FIRST_FEED, _MAX_FEED = 64, 1 << 16
"""The inflater's first piece of a member's input, doubled per call up to the last: a tiny member leaves at most
64 bytes unread (copied), a large one costs a few calls."""


def _gunzip(value: bytes, limit: int, partial: bool = False) -> bytes:
    """The gzip members of ``value`` inflated, as ``GZIPInputStream`` with Kafka's 8 KiB input buffer reads them
    (the module's docstring); `StreamFailure` where Java's stream throws, `InflationLimitExceeded` beyond
    ``limit`` (``partial``: the first ``limit`` bytes instead)."""
    view = memoryview(value)
    size = len(value)
    try:
        pos = _gzip_header(view, 0)
    except _JavaIOError as e:
        raise StreamFailure(b"", e.java, eof=e.eof, at_open=True) from None
    parts: list[bytes] = []  # the members inflated (joined once: one member is not copied)
    inflated = 0
    chunk_end = min(pos + _GZIP_INPUT_BUFFER, size)
    """Where the input chunk the inflater is reading ends: the header is read from the stream itself, then the
    inflater fills 8 KiB at a time from where it ended."""
    while True:
        budget = limit - inflated
        inflater = zlib.decompressobj(wbits=-15)  # GZIPInputStream's Inflater(nowrap)
        pieces: list[bytes] = []
        got = 0
        feed, step = pos, _FIRST_FEED
        try:
            while True:  # fed a growing piece at a time: zlib copies what follows a member's end (`unused_data`),
                # so feeding it the whole rest made a value of many tiny members quadratic (3.2 MB: 29 s)
                feed_end = min(feed + step, size)
                piece = inflater.decompress(view[feed:feed_end], budget + 1 - got)
                pieces.append(piece)
                got += len(piece)
                if got > budget or inflater.eof or feed_end >= size:
                    break
                feed, step = feed_end, min(step * 2, _MAX_FEED)
        except zlib.error as e:  # InflaterInputStream: the DataFormatException as a ZipException
            reason = str(e).partition("while decompressing data: ")[2] or "Invalid ZLIB data format"
            raise StreamFailure(b"".join(parts), f"{_ZIP}: {reason}") from None
        member = pieces[0] if len(pieces) == 1 else b"".join(pieces)
        if len(member) > budget:
            if partial:
                return b"".join([*parts, member[:budget]])
            raise InflationLimitExceeded(f"inflates beyond {limit} bytes")
        parts.append(member)
        inflated += len(member)
        if not inflater.eof:  # the input ran out inside the deflate stream: InflaterInputStream.fill
            raise StreamFailure(b"".join(parts), f"{_EOF}: Unexpected end of ZLIB input stream", eof=True)
        end = feed_end - len(inflater.unused_data)  # the member's deflate stream ends here
        if end + 4 > size:  # readTrailer's readUInt: the CRC, then the size
            raise StreamFailure(b"".join(parts), _EOF, eof=True)
        if int.from_bytes(view[end:end + 4], "little") != zlib.crc32(member):
            raise StreamFailure(b"".join(parts), f"{_ZIP}: Corrupt GZIP trailer")
        if end + 8 > size:
            raise StreamFailure(b"".join(parts), _EOF, eof=True)
        if int.from_bytes(view[end + 4:end + 8], "little") != len(member) & 0xFFFFFFFF:
            raise StreamFailure(b"".join(parts), f"{_ZIP}: Corrupt GZIP trailer")
        if end > chunk_end:  # the chunk the member ended in (the fills are 8 KiB from the last one)
            chunk_end = min(chunk_end + -(-(end - chunk_end) // _GZIP_INPUT_BUFFER) * _GZIP_INPUT_BUFFER, size)
        if chunk_end - end <= 26:  # readTrailer looks for a next member only past 26 bytes left in its buffer
            return b"".join(parts)
        try:
            pos = _gzip_header(view, end + 8)
        except _JavaIOError:
            return b"".join(parts)  # "ignore any malformed, do nothing": the stream ends at this member
        if pos >= chunk_end:  # the header ran past the buffer: the next fills start after it
            chunk_end = min(pos + _GZIP_INPUT_BUFFER, size)


_SNAPPY_IO = "org.xerial.snappy.SnappyIOException"
_SNAPPY_PARSING_ERROR = "java.io.IOException: PARSING_ERROR(2)"
_SNAPPY_FAILED = "java.io.IOException: FAILED_TO_UNCOMPRESS(5)"
_XERIAL_MAGIC_HEAD = struct.unpack(">i", XERIAL_MAGIC[:4])[0]
"""``SnappyCodec.MAGIC_HEADER_HEAD``: a chunk length equal to it starts a concatenated stream's header."""


def _snappy(value: bytes, limit: int, partial: bool = False) -> bytes:
    """A snappy value as snappy-java 1.1.8.1's ``SnappyInputStream`` (Kafka 2.8's) reads it, derived from its
    source and checked against it (its Java class over the native library of a later snappy-java). Its constructor
    reads the 16-byte header: an empty value fails ("[EMPTY_INPUT] Cannot decompress empty stream"); one shorter
    than 16 bytes or not starting with the 8-byte magic is one raw snappy block, decompressed there (its native
    errors: "PARSING_ERROR(2)" for the length, "FAILED_TO_UNCOMPRESS(5)" for the rest); the header's version fields
    are not checked. Those are ``at_open`` (`StreamFailure`). Then a chunk is read only when a read needs bytes past
    the ones before (``hasNextChunk``): fewer than 4 bytes of a length end the stream (ignored); a length equal to
    the magic's first four bytes is a concatenated stream's header: fewer than 12 more bytes "[FAILED_TO_UNCOMPRESS]
    Insufficient header size in a concatenated block", another magic ends the read that meets it
    (`SnappyContent`), a version below 1
    "[INCOMPATIBLE_VERSION] ..."; a chunk cut short "failed to read chunk"; a negative length as the first chunk
    ``new byte[n]``'s ``NegativeArraySizeException`` (``unchecked``; after a chunk the array is reused and the native
    length parser, handed a limit before its start, fails: PARSING_ERROR(2)); a block that is not snappy the native
    errors."""
    if not value:
        raise StreamFailure(b"", f"{_SNAPPY_IO}: [EMPTY_INPUT] Cannot decompress empty stream", at_open=True)
    if len(value) < XERIAL_HEADER_SIZE or not value.startswith(XERIAL_MAGIC):
        try:
            return _snappy_block(value, limit)
        except StreamFailure as opening:  # SnappyInputStream's constructor reads it whole
            opening.at_open = True
            raise
    out = bytearray()
    pos = XERIAL_HEADER_SIZE
    chunks = 0
    size_of_value = len(value)
    soft_ends: list[int] = []
    while True:
        empty = _EMPTY_SNAPPY_CHUNKS.match(value, pos)
        if empty is not None:  # chunks that inflate to nothing: skipped in C, a run at a time
            pos = empty.end()
            chunks += 1
        if pos + 4 > size_of_value:
            return _snappy_content(out, soft_ends)  # readNext got fewer than 4 bytes: the end
        (size,) = struct.unpack_from(">i", value, pos)
        pos += 4
        if size == _XERIAL_MAGIC_HEAD:  # a concatenated stream's header
            if pos + 12 > size_of_value:
                raise _snappy_failure(out, soft_ends, f"{_SNAPPY_IO}: [FAILED_TO_UNCOMPRESS] Insufficient header "
                                      "size in a concatenated block")
            pos += 12
            if value[pos - 12:pos - 8] != XERIAL_MAGIC[4:]:  # another magic: the read meeting it ends
                soft_ends.append(len(out))  # (`SnappyContent`)
                continue
            (version,) = struct.unpack_from(">i", value, pos - 8)
            if version < 1:
                raise _snappy_failure(out, soft_ends, f"{_SNAPPY_IO}: [INCOMPATIBLE_VERSION] Compressed with an "
                                      f"incompatible codec version {version}. At least version 1 is required")
            continue
        if size < 0:
            if not chunks:
                raise _snappy_failure(out, soft_ends, f"java.lang.NegativeArraySizeException: {size}", unchecked=True)
            raise _snappy_failure(out, soft_ends, _SNAPPY_PARSING_ERROR)
        if size > size_of_value - pos:
            raise _snappy_failure(out, soft_ends, "java.io.IOException: failed to read chunk")
        chunks += 1
        try:
            out += _snappy_block(value[pos:pos + size], limit - len(out))
        except InflationLimitExceeded:
            if partial and out:
                return _snappy_content(out, soft_ends)  # the whole chunks within the limit
            raise
        except StreamFailure as failed:
            raise _snappy_failure(out, soft_ends, failed.java) from None
        pos += size


def _snappy_failure(out: bytearray, soft_ends: list[int], java: str, *, unchecked: bool = False) -> StreamFailure:
    """Where `_snappy` fails: the content before, and Java's exception."""
    return StreamFailure(_snappy_content(out, soft_ends), java, unchecked=unchecked)


def _snappy_block(block: bytes, limit: int) -> bytes:
    """One raw snappy block, as snappy-java's native ``uncompressedLength`` then ``rawUncompress`` read it: their
    errors (`StreamFailure`, its data empty: the caller's to set) are "PARSING_ERROR(2)" for an unreadable length,
    "FAILED_TO_UNCOMPRESS(5)" for the rest; `InflationLimitExceeded` beyond ``limit``."""
    try:
        if not block:  # snappy's GetUncompressedLength reads no varint there (cramjam's says 0)
            raise cramjam.DecompressionError("empty")
        size = cramjam.snappy.decompress_raw_len(block)
    except cramjam.DecompressionError:
        raise StreamFailure(b"", _SNAPPY_PARSING_ERROR) from None
    if size > limit:
        raise InflationLimitExceeded("snappy block inflates beyond the limit")
    out = bytearray(size)
    try:
        if cramjam.snappy.decompress_raw_into(block, out) != size:
            raise StreamFailure(b"", _SNAPPY_FAILED)
    except cramjam.DecompressionError:
        raise StreamFailure(b"", _SNAPPY_FAILED) from None
    return bytes(out)


_PREMATURE_EOS = "java.io.IOException: Stream ended prematurely"
_UNDERFLOW = "java.nio.BufferUnderflowException"
_LZ4_FLG_ERRORS = ((0x03, 0x00, "Reserved bits must be 0"), (0x20, 0x20, "Dependent block stream is unsupported"))
"""``FLG.validate``'s checks, in its order (mask, the value it needs, the ``RuntimeException``'s message); the
version (the top two bits, 1) is checked last."""


def _lz4_header(value: bytes, ignore_header_checksum: bool) -> tuple[int, int, int]:
    """``KafkaLZ4BlockInputStream.readHeader`` (its constructor's): where the blocks start, the flags byte and the
    block maximum size; `StreamFailure` (``at_open``) with what Java throws, in its order: fewer than 6 bytes or a
    content size cut short ``IOException`` PREMATURE_EOS, another magic NOT_SUPPORTED, ``FLG``/``BD``'s
    ``RuntimeException`` (reserved bits, dependent blocks, version; reserved fields, block size), no checksum byte
    left ``BufferUnderflowException`` (magic 0, which skips it: ``position``'s ``IllegalArgumentException``), a
    wrong one DESCRIPTOR_HASH_MISMATCH. ``CompressionType.wrapForInput`` wraps each in a ``KafkaException``."""
    def fail(java: str) -> StreamFailure:
        return StreamFailure(b"", java, at_open=True)

    if len(value) < 6:
        raise fail(_PREMATURE_EOS)
    if struct.unpack_from("<I", value, 0)[0] != LZ4_FRAME_MAGIC:
        raise fail("java.io.IOException: Stream unsupported (invalid magic bytes)")
    flg, bd = value[4], value[5]
    for mask, needed, message in _LZ4_FLG_ERRORS:
        if flg & mask != needed:
            raise fail(f"java.lang.RuntimeException: {message}")
    if flg >> 6 != 1:
        raise fail(f"java.lang.RuntimeException: Version {flg >> 6} is unsupported")
    if bd & 0x0F:
        raise fail("java.lang.RuntimeException: Reserved2 field must be 0")
    if (bd >> 4) & 0x07 not in _LZ4_BLOCK_MAX:
        raise fail("java.lang.RuntimeException: Block size value must be between 4 and 7")
    if bd & 0x80:
        raise fail("java.lang.RuntimeException: Reserved3 field must be 0")
    descriptor_end = 6
    if flg & 0x08:  # the content size: skipped
        if len(value) < 14:
            raise fail(_PREMATURE_EOS)
        descriptor_end = 14
    if ignore_header_checksum:  # in.position(in.position() + 1)
        if descriptor_end + 1 > len(value):
            raise fail(f"java.lang.IllegalArgumentException: newPosition > limit: ({descriptor_end + 1} > "
                       f"{len(value)})")
    elif descriptor_end >= len(value):
        raise fail(_UNDERFLOW)
    elif value[descriptor_end] != (xxh32(value[4:descriptor_end]) >> 8) & 0xFF:
        raise fail("java.io.IOException: Stream frame descriptor corrupted")
    return descriptor_end + 1, flg, _LZ4_BLOCK_MAX[(bd >> 4) & 0x07]


def _lz4_frame(value: bytes, *, ignore_header_checksum: bool, limit: int, partial: bool = False) -> bytes:
    """An LZ4 frame's content as ``KafkaLZ4BlockInputStream`` reads it (the header: `_lz4_header`), block by block
    (``readBlock``), each read only when the reader needs bytes past the ones before: so where Java fails is
    `StreamFailure` with the content of the blocks before it, and what it throws there: fewer than 4 bytes for a
    block's size, or fewer than the size, ``IOException`` PREMATURE_EOS ("Stream ended prematurely", a frame without
    its end mark included); a size beyond the maximum "Block size S exceeded max: M"; a compressed block lz4 cannot
    decode ``IOException`` of the ``LZ4Exception`` (lz4-java's native decoder: "Error decoding offset N of input
    buffer", N where its decoder stopped, counted in the request's receive buffer: not modelled, the block's
    offset in the value given; where the message is built says what Kafka's N is made of); then, flagged, its
    checksum: fewer than 4 bytes ``getInt``'s
    ``BufferUnderflowException`` (``unchecked``: no reader wraps it), a wrong one BLOCK_HASH_MISMATCH. The end
    mark ends the frame; a content checksum flagged after it is skipped unverified, as Kafka does, but read:
    fewer than 4 bytes left is ``BufferUnderflowException`` too. Bytes after the frame are not read."""
    pos, flg, block_max = _lz4_header(value, ignore_header_checksum)
    block_checksums = bool(flg & 0x10)
    out = bytearray()
    buffer: bytearray | None = None
    """One block's worth, made once per frame: a fresh 4 MiB buffer per block made a frame of tiny blocks that
    inflate to nothing (five bytes each, so the limit never trips) cost seconds per 100 KB."""
    empty_blocks = _EMPTY_LZ4_BLOCKS_CHECKED if block_checksums else _EMPTY_LZ4_BLOCKS
    empty_at: list[int] = []

    def failure(java: str, *, unchecked: bool = False) -> StreamFailure:
        return StreamFailure(_lz4_content(out, empty_at), java, unchecked=unchecked)

    size_of_value = len(value)
    while True:
        empty = empty_blocks.match(value, pos)
        if empty is not None:  # blocks that inflate to nothing: skipped in C, a run at a time (where: `Lz4Content`)
            pos = empty.end()
            empty_at.append(len(out))
        if pos + 4 > size_of_value:
            raise failure(_PREMATURE_EOS)
        (word,) = struct.unpack_from("<I", value, pos)
        pos += 4
        size = word & ~_LZ4_UNCOMPRESSED
        if size == 0:  # the end mark
            if flg & 0x04 and pos + 4 > size_of_value:  # in.getInt() of the content checksum
                raise failure(_UNDERFLOW, unchecked=True)
            return _lz4_content(out, empty_at)
        if size > block_max:
            raise failure(f"java.io.IOException: Block size {size} exceeded max: {block_max}")
        if size > size_of_value - pos:
            raise failure(_PREMATURE_EOS)
        block = value[pos:pos + size]
        data: bytes | bytearray
        if word & _LZ4_UNCOMPRESSED:
            data = block
        else:
            if buffer is None:
                buffer = bytearray(block_max)
            try:
                data = buffer[:cramjam.lz4.decompress_block_into(block, buffer, output_len=block_max)]
            except cramjam.DecompressionError:
                # Kafka's N differs, and cannot be had here. readBlock calls lz4-java 1.7.1's JNI safe decompressor
                # with the array behind its buffer, srcOff = in.position() + in.arrayOffset(), and it reports
                # "Error decoding offset " + (srcOff - result), result being lz4 1.9.2's LZ4_decompress_safe error
                # -(ip - src) - 1. So N = A + pos + c + 1: A, where this value starts in the array: every buffer
                # on the way is a slice, not a copy (ByteBufferAccessor.readRecords, ByteBufferLogInputStream, a
                # legacy wrapper's LegacyRecord.value()), so for Produce it is the request's receive buffer,
                # counted from the request header's first byte (after the 4-byte size): the header, client id and
                # the Produce fields before this partition's record set, then the entry's own offset (a v2 batch's
                # records begin 61 bytes in); `validate` is handed the record set alone. pos, this block's offset
                # in the value (after its 4-byte size): known, and what we write. c, how many of the block's bytes
                # lz4 1.9.2's decoder read before it failed (its fast and safe loops stop at different points):
                # cramjam decodes with another implementation and reports no position. (Without lz4-java's native
                # library the Java decompressor says "Malformed input at ..." instead.) Where N is seen: a legacy
                # wrapper's failure is KafkaException(e), its message this cause's text, in the ERROR line of
                # "Error processing append operation"; a v2 batch's is "Failed to decompress record stream", N only
                # in the stack trace's cause, which the line here does not print. The answer carries no message.
                raise failure("java.io.IOException: net.jpountz.lz4.LZ4Exception: Error decoding offset "
                              f"{pos} of input buffer") from None
        pos += size
        if block_checksums:
            if pos + 4 > size_of_value:
                raise failure(_UNDERFLOW, unchecked=True)
            if struct.unpack_from("<I", value, pos)[0] != xxh32(block):
                raise failure("java.io.IOException: Block checksum mismatch")
            pos += 4
        if len(out) + len(data) > limit:
            if partial:
                return _lz4_content(out + data[:limit - len(out)], empty_at)
            raise InflationLimitExceeded("lz4 frame inflates beyond the limit")
        out += data


class _ZstdUnreadable(CompressionError):
    """A zstd value ``cramjam`` cannot decode whole."""


def _zstd(value: bytes, limit: int, partial: bool = False) -> bytearray:
    """The zstd frames of ``value`` (`_zstd_whole`); where they do not decode, what zstd-jni's stream gives before
    it fails there (`_zstd_frames`)."""
    try:
        return _zstd_whole(value, limit, partial)
    except _ZstdUnreadable:
        return _zstd_frames(value, limit, partial)


def _zstd_whole(value: bytes, limit: int, partial: bool = False) -> bytearray:
    """The zstd frames of ``value``, inflated into a buffer that grows (by doubling, from 64 KiB) up to
    ``limit`` + 1 bytes: ``cramjam``'s ``decompress_into`` stops once the buffer is full, so a bomb costs at most
    about twice ``limit`` bytes of decoding. Even a small batch allocates the first 64 KiB (trimmed to its
    size after). (A frame's content size, when its writer gave one, is not trusted: zstd-jni's streams leave it
    out anyway.)"""
    size = min(_ZSTD_FIRST_BUFFER, limit + 1)
    while True:
        out = bytearray(size)
        try:
            written = cramjam.zstd.decompress_into(value, out)
        except cramjam.DecompressionError as e:
            if str(e) != _ZSTD_FULL:  # unreadable (cramjam's only other failure)
                raise _ZstdUnreadable(str(e)) from None
            if partial and size >= limit:
                del out[limit:]  # a full buffer holds the frames' first bytes
                return out
            if size > limit:
                raise InflationLimitExceeded(f"zstd frame inflates beyond {limit} bytes") from None
            size = min(size * 2, limit + 1)  # full: tried again twice as large
            continue
        if written > limit:
            if partial:
                del out[limit:]
                return out
            raise InflationLimitExceeded(f"zstd frame inflates beyond {limit} bytes")
        del out[written:]
        return out


_ZSTD_MAGIC = 0xFD2FB528
_ZSTD_MAGIC_BYTES = struct.pack("<I", _ZSTD_MAGIC)
_ZSTD_SOURCE_CHUNK = 131_075
"""zstd-jni's source buffer (``ZSTD_DStreamInSize()``): ``ZstdInputStreamNoFinalizer`` reads its source this much
at a time."""
_ZSTD_TRUNCATED = "java.io.IOException: Read error or truncated source"


def _zstd_frames(value: bytes, limit: int, partial: bool) -> bytearray:
    """A zstd value that does not decompress whole, frame by frame as zstd-jni 1.4.9's ``ZstdInputStreamNoFinalizer``
    (Kafka 2.8's; checked against a later zstd-jni, whose stream reads alike) gives it: each whole frame that
    decodes, then the failure (`StreamFailure`, never at opening: its constructor reads nothing). A frame cut
    short gives its whole blocks and the part of a raw block it holds (`_zstd_cut_frame`), then the end of the
    source: "Read error or truncated source", unless a frame ended since the source's last read (``frameFinished``
    still set: a clean end of stream, so no failure; a skippable frame ends one too, as checked).
    A frame that does not decode (another magic, or fewer than 4 bytes that begin no magic; a reserved bit or block
    type; a block larger than its window allows; a corrupt block, a wrong checksum) fails with none of its content (a
    simplification: Java gives the blocks before a corrupt one where its 16 KiB reads end before it). Checked
    against Kafka's readers over zstd-jni 1.5.7, whose stream reads its source as 1.4.9's does; zstd-jni's texts
    here are never shown (a v2 batch's ``KafkaException`` carries them as its cause only)."""
    size = len(value)
    ends = [0]  # where the whole frames walked end (0: before the first)
    pos = 0
    end: int | None = 0
    blocks: list[tuple[int, int, int]] | None = None
    cut = False
    while pos < size:
        end, blocks, cut = _zstd_frame_extent(value, pos)
        if end is None or cut:
            break
        pos = end
        ends.append(end)
    low, high = 0, len(ends) - 1  # the most whole frames that decode: all of them (the failure after them), else
    # a binary search, each try one call in C (a value of many tiny frames is not decoded a frame at a time)
    try:
        out = _zstd_whole(value[:ends[high]], limit, partial) if high else bytearray()
        low = high
    except _ZstdUnreadable:
        high -= 1
    while low < high:
        middle = (low + high + 1) // 2
        try:
            _zstd_whole(value[:ends[middle]], limit, partial)
            low = middle
        except _ZstdUnreadable:
            high = middle - 1
    if low < len(ends) - 1:
        out = _zstd_whole(value[:ends[low]], limit, partial) if low else bytearray()
    if partial and len(out) >= limit:
        return out
    if low < len(ends) - 1:  # the next whole frame does not decode
        raise StreamFailure(out, "java.io.IOException: Decompression error: Corrupted block detected")
    if end is None:  # not a zstd frame, a reserved bit or block type: an error as the decoder meets it
        raise StreamFailure(out, "java.io.IOException: Decompression error: Unknown frame descriptor")
    if not cut:
        return out
    out += _zstd_cut_frame(value, pos, blocks or [], limit - len(out))
    if len(ends) > 1 and ends[-1] > (size - 1) // _ZSTD_SOURCE_CHUNK * _ZSTD_SOURCE_CHUNK:
        return out  # a frame ended since the source's last read (frameFinished): a clean end
    raise StreamFailure(out, _ZSTD_TRUNCATED)


def _zstd_frame_extent(value: bytes, pos: int) -> tuple[int | None, list[tuple[int, int, int]] | None, bool]:
    """The zstd (or skippable) frame at ``pos`` walked by its headers: where it ends (None: not a frame the
    decoder reads), its whole blocks (type, where its payload starts, its size; None for a skippable frame), and
    whether the value ends inside it (cut)."""
    size = len(value)
    if pos + 4 > size:  # a magic cut short: zstd checks the bytes it has against its magics
        rest = value[pos:]
        if _ZSTD_MAGIC_BYTES.startswith(rest) or (rest[0] & 0xF0 == 0x50 and b"\x2a\x4d\x18".startswith(rest[1:])):
            return pos, [], True
        return None, None, False
    (magic,) = struct.unpack_from("<I", value, pos)
    if magic & 0xFFFFFFF0 == 0x184D2A50:  # skippable
        if pos + 8 > size:
            return pos, [], True
        end = pos + 8 + struct.unpack_from("<I", value, pos + 4)[0]
        return (end, None, False) if end <= size else (pos, [], True)
    if magic != _ZSTD_MAGIC:
        return None, None, False
    if pos + 5 > size:
        return pos, [], True
    fhd = value[pos + 4]
    single = fhd >> 5 & 1
    at = pos + 5 + (0 if single else 1) + (0, 1, 2, 4)[fhd & 3] + (single, 2, 4, 8)[fhd >> 6]
    blocks: list[tuple[int, int, int]] = []
    if at > size:  # the header is read whole before it is checked
        return at, blocks, True
    if fhd & 0x08:  # its reserved bit
        return None, None, False
    if single:  # the window is the content size
        fcs_size, fcs_at = (1, 2, 4, 8)[fhd >> 6], at - (1, 2, 4, 8)[fhd >> 6]
        window = int.from_bytes(value[fcs_at:at], "little") + (256 if fcs_size == 2 else 0)
    else:
        descriptor = value[pos + 5]
        window = (1 << (descriptor >> 3) + 10) * (8 + (descriptor & 7)) // 8
    block_max = min(window, 1 << 17)
    while True:
        if at + 3 > size:
            return at, blocks, True
        header = value[at] | value[at + 1] << 8 | value[at + 2] << 16
        kind, block_size = header >> 1 & 3, header >> 3
        if kind == 3 or block_size > block_max:  # a reserved type, or larger than a block may be
            return None, None, False
        at += 3
        if at + (1 if kind == 1 else block_size) > size:
            blocks.append((kind, at, -1))  # cut: a raw block gives what it holds
            return at, blocks, True
        blocks.append((kind, at, block_size))
        at += 1 if kind == 1 else block_size
        if header & 1:
            break
    if fhd & 0x04:
        at += 4
        if at > size:
            return at, blocks, True
    return at, blocks, False


def _zstd_cut_frame(value: bytes, pos: int, blocks: list[tuple[int, int, int]], limit: int) -> bytes:
    """What zstd-jni's stream gives of the frame at ``pos`` the value ends inside: its whole blocks (decoded as a
    frame of their own: the same header less its content size and checksum, the last of them marked last), then
    what a cut raw block holds. Blocks that do not decode give nothing (a simplification)."""
    whole = [b for b in blocks if b[2] >= 0]
    out = bytearray()
    if whole:
        fhd = value[pos + 4]
        single = fhd >> 5 & 1
        at = pos + 5
        if single:  # the window is the content size: one at least as large
            fcs_size = (1, 2, 4, 8)[fhd >> 6]
            fcs_at = at + (0, 1, 2, 4)[fhd & 3]
            fcs = int.from_bytes(value[fcs_at:fcs_at + fcs_size], "little") + (256 if fcs_size == 2 else 0)
            window = bytes([max(0, fcs.bit_length() - 10) << 3])
        else:
            window = value[at:at + 1]
            at += 1
        dictionary = value[at:at + (0, 1, 2, 4)[fhd & 3]]
        first, last = whole[0][1] - 3, whole[-1][1] - 3
        end = whole[-1][1] + (1 if whole[-1][0] == 1 else whole[-1][2])
        frame = bytearray(struct.pack("<I", _ZSTD_MAGIC) + bytes([fhd & 3]) + window + dictionary + value[first:end])
        frame[len(frame) - (end - last)] |= 1  # the last whole block is the frame's last
        try:
            out += _zstd_whole(bytes(frame), limit)
        except _ZstdUnreadable:
            return b""
    kind, start, block_size = blocks[-1] if blocks else (2, 0, 0)
    if kind == 0 and block_size < 0:  # a cut raw block: its bytes stream as they come
        if len(out) + len(value) - start > limit:
            raise InflationLimitExceeded(f"zstd frame inflates beyond {limit} bytes")
        out += value[start:]
    return bytes(out)


def xxh32(data: bytes) -> int:
    """xxHash32 with seed 0 (the LZ4 frame format's checksum), from the ``xxhash`` C library: block checksums
    cover the whole value, and a pure-Python hash would hold the event loop for about 0.35 s per MiB."""
    return xxhash.xxh32_intdigest(data)
