"""`VirtualClockLoop`: time jumps only when nothing can happen before the next timer, never past bytes in flight."""

from __future__ import annotations

import asyncio
import socket

import pytest
from tests.wire import socket_virtual_clock
from tests.wire.socket_virtual_clock import VirtualClockLoop, _QuiescentSelector, run_on_virtual_clock


def test_a_virtual_hour_passes_with_a_real_connection_open() -> None:
    async def main() -> float:
        server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
        _reader, writer = await asyncio.open_connection("127.0.0.1", server.sockets[0].getsockname()[1])
        await asyncio.sleep(3600)
        writer.close()
        server.close()
        return asyncio.get_running_loop().time()

    assert run_on_virtual_clock(main()) == 3600.0


def test_bytes_one_end_sent_and_the_other_has_not_received_are_in_flight(monkeypatch: pytest.MonkeyPatch) -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    client = socket.create_connection(listener.getsockname())
    server, _ = listener.accept()
    selector = _QuiescentSelector()
    try:
        selector.register(client, 1)
        selector.register(server, 1)
        assert not selector._bytes_in_flight()
        counts = {client.getsockname(): (5, 0), server.getsockname(): (0, 3)}  # 5 sent, 3 received so far
        monkeypatch.setattr(socket_virtual_clock, "_data_bytes", lambda sock: counts[sock.getsockname()])
        assert selector._bytes_in_flight()
        counts[server.getsockname()] = (0, 5)
        assert not selector._bytes_in_flight()
    finally:
        selector.close()
        for sock in (client, server, listener):
            sock.close()


def test_every_task_waiting_with_nothing_to_come_is_reported_not_waited_out() -> None:
    loop = VirtualClockLoop()
    try:
        with pytest.raises(RuntimeError, match="nothing can happen any more"):
            loop.run_until_complete(asyncio.Event().wait())
    finally:
        loop.close()
