"""Shared by the wire fuzz tests (`test_offsets_delete_fuzz`, `test_admin_apis_fuzz`): mutating a valid request
frame, handling one with a bound, and the huge-announced-length check run in a child process."""

from __future__ import annotations

import asyncio
import struct
import subprocess
import sys
from collections.abc import Callable

from hypothesis import strategies as st

from zkcontroller.broker.kafka_apis import CloseConnection, KafkaApis


def mutate(draw: st.DrawFn, valid: list[bytes]) -> bytes:
    """One of ``valid`` with 1–4 flips, truncations, insertions or planted lengths after its header."""
    payload = bytearray(draw(st.sampled_from(valid)))
    header = 8  # api key, version, correlation id: kept so the body parser is what is exercised
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["flip", "truncate", "insert", "length"]))
        if kind in ("flip", "truncate") and len(payload) <= header:
            continue
        if kind == "flip":
            payload[draw(st.integers(header, len(payload) - 1))] = draw(st.integers(0, 255))
        elif kind == "truncate":
            del payload[draw(st.integers(header, len(payload) - 1)):]
        elif kind == "insert":
            i = draw(st.integers(header, len(payload)))
            payload[i:i] = draw(st.binary(min_size=1, max_size=8))
        elif len(payload) >= header + 4:
            i = draw(st.integers(header, len(payload) - 4))
            payload[i:i + 4] = struct.pack(">i", draw(st.sampled_from([-2, -1, 0x7FFFFFFF, 1 << 20])))
    return bytes(payload)


async def handle(apis: KafkaApis, payload: bytes) -> bytes | None:
    """The response to ``payload`` (within 5 s), None if the broker closes the connection."""
    try:
        return await asyncio.wait_for(apis.handle(payload), 5)
    except CloseConnection:
        return None


def assert_huge_lengths_close_in_a_child(module: str, count: int) -> None:
    """Each of ``module``'s ``HUGE_LENGTHS``, handled by its ``_apis()`` in a child process, closes the connection:
    if kio's native reader were reached it would abort the interpreter, not fail."""
    script = (
        "import asyncio\n"
        f"from {module} import HUGE_LENGTHS, _apis\n"
        "from zkcontroller.broker.kafka_apis import CloseConnection\n"
        "async def main():\n"
        "    apis = _apis()\n"
        "    for payload in HUGE_LENGTHS:\n"
        "        try:\n"
        "            await apis.handle(payload)\n"
        "            print('answered')\n"
        "        except CloseConnection as e:\n"
        "            print('closed', e)\n"
        "asyncio.run(main())\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert len(lines) == count and all(line.startswith("closed") for line in lines), done.stdout


async def assert_answered_after(make_apis: Callable[[], KafkaApis], payload: bytes, valid: bytes) -> None:
    """On fresh ``make_apis()``: ``payload`` is answered or closes the connection (never another exception), and
    ``valid`` is answered after it, so nothing is left wedged."""
    apis = make_apis()
    await handle(apis, payload)
    assert await handle(apis, valid) is not None


async def assert_every_frame_answered(apis: KafkaApis, frames: list[bytes]) -> None:
    for payload in frames:
        assert await handle(apis, payload) is not None, payload[:8].hex()
