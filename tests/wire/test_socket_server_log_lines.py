"""The socket server's connection closes logged as Kafka 2.8.2 logs them: the Selector's WARN for an invalid
receive size and TRACE for an idle connection, the Processor's ERROR for a request it closes on, each with the
broker's ``[SocketServer listenerType=ZK_BROKER, nodeId=N] `` ident and Kafka's connection id."""

from __future__ import annotations

import asyncio
import logging
import re

import pytest

from zkcontroller.runtime.socket_server import SocketServer

SELECTOR = "org.apache.kafka.common.network.Selector"
PROCESSOR = "kafka.network.Processor"
IDENT = "[SocketServer listenerType=ZK_BROKER, nodeId=3] "
CONNECTION_ID = r"127\.0\.0\.1:\d+-127\.0\.0\.1:\d+-\d+"


class Refused(Exception):
    pass


async def refuse(payload: bytes) -> bytes:
    if payload == b"no":
        raise Refused("not this one")
    return payload


async def closed(reader: asyncio.StreamReader) -> bool:
    return await asyncio.wait_for(reader.read(1), 30) == b""


async def test_each_close_is_kafkas_line(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, PROCESSOR)
    caplog.set_level(5, SELECTOR)  # last: it sets the capturing handler's level too (TRACE)
    server = SocketServer("127.0.0.1", 0, refuse, max_request_bytes=100, connections_max_idle_ms=200,
                          close_on=(Refused,), node_id=3)
    await server.start()
    try:
        big_reader, big_writer = await asyncio.open_connection("127.0.0.1", server.port)
        big_writer.write(b"\x00\x00\x01\x00")  # 256 > 100
        assert await closed(big_reader)
        negative_reader, negative_writer = await asyncio.open_connection("127.0.0.1", server.port)
        negative_writer.write(b"\xff\xff\xff\xff")
        assert await closed(negative_reader)
        refused_reader, refused_writer = await asyncio.open_connection("127.0.0.1", server.port)
        refused_writer.write(b"\x00\x00\x00\x02no")
        assert await closed(refused_reader)
        idle_reader, idle_writer = await asyncio.open_connection("127.0.0.1", server.port)
        assert await closed(idle_reader)
        for writer in (big_writer, negative_writer, refused_writer, idle_writer):
            writer.close()
    finally:
        await server.stop()
    lines = [(r.name, r.levelno, r.getMessage()) for r in caplog.records if r.name in (SELECTOR, PROCESSOR)]
    assert lines[:2] == [
        (SELECTOR, logging.WARNING, f"{IDENT}Unexpected error from /127.0.0.1; closing connection\n"
                                    "org.apache.kafka.common.network.InvalidReceiveException: Invalid receive "
                                    "(size = 256 larger than 100)"),
        (SELECTOR, logging.WARNING, f"{IDENT}Unexpected error from /127.0.0.1; closing connection\n"
                                    "org.apache.kafka.common.network.InvalidReceiveException: Invalid receive "
                                    "(size = -1)"),
    ]
    assert len(lines) == 4, lines
    (name, level, refused_line), (idle_name, idle_level, idle_line) = lines[2:]
    assert (name, level) == (PROCESSOR, logging.ERROR)
    assert re.fullmatch(re.escape(IDENT) + f"Closing socket for {CONNECTION_ID} because of error\n"
                        + re.escape(f"{__name__}.Refused: not this one"), refused_line), refused_line
    assert (idle_name, idle_level) == (SELECTOR, 5)
    assert re.fullmatch(re.escape(IDENT) + f"About to close the idle connection from {CONNECTION_ID} due to being "
                        "idle for 200 millis", idle_line), idle_line
