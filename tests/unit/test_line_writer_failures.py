"""`LineWriter` when the file refuses a write (a full disk, an I/O error) or a roll-over's rename: the error is
reported as `logging.Handler.handleError` reports one, never raised into the controller; only the refused lines
are lost, and the size the roll-over goes by stays the file's own."""

from __future__ import annotations

import errno
import io
import os
from pathlib import Path
from typing import Any

import pytest

from zkcontroller.cluster import line_writer
from zkcontroller.cluster.line_writer import LineWriter


class FailingFile(io.FileIO):
    """A real file whose writes fail as the test says: ``room`` bytes left on the disk (then ENOSPC, after a
    partial write as the kernel gives), or the next ``fail_next`` write calls failing with EIO."""

    room: int | None = None
    fail_next = 0

    def write(self, data: Any) -> int:
        if FailingFile.fail_next > 0:
            FailingFile.fail_next -= 1
            raise OSError(errno.EIO, "Input/output error")
        data = memoryview(data).cast("B")
        if FailingFile.room is not None:
            if FailingFile.room <= 0:
                raise OSError(errno.ENOSPC, "No space left on device")
            data = data[:FailingFile.room]
            FailingFile.room -= len(data)
        return super().write(data)


@pytest.fixture(autouse=True)
def failing_files(monkeypatch: pytest.MonkeyPatch) -> None:
    """The writer's files are `FailingFile`s (buffered as the module asks, so the old `BufferedWriter` is tested
    over the same failing file)."""
    FailingFile.room, FailingFile.fail_next = None, 0

    def fake_open(path: Any, mode: str, buffering: int = -1) -> Any:
        raw = FailingFile(path, mode)
        return raw if buffering == 0 else io.BufferedWriter(raw, buffering)

    monkeypatch.setattr(line_writer, "open", fake_open, raising=False)


def test_a_full_disk_loses_only_the_lines_it_refused_and_the_size_stays_the_files(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "events.jsonl"
    writer = LineWriter(path, max_bytes=60, backups=1)
    FailingFile.room = len(b"line 0\nline 1\nli")  # room for two lines and part of a third
    writer.write_lines([f"line {i}" for i in range(5)])  # a step's batch: no exception into the controller
    assert path.read_bytes() == b"line 0\nline 1\n"  # the part line is cut off: the file ends after a whole line
    assert writer._size == path.stat().st_size
    err = capsys.readouterr().err
    assert "--- Logging error ---" in err and "No space left on device" in err
    assert f"3 line(s) (21 bytes) lost: not written to {path}; the file is 14 bytes" in err

    FailingFile.room = None  # space again: writing goes on, and the roll comes when the real size says
    for i in range(5, 12):
        writer.write(f"line {i}")
        assert writer._size == path.stat().st_size
    writer.close()
    rolled = (tmp_path / "events.jsonl.1").read_bytes()
    assert rolled == b"line 0\nline 1\n" + b"".join(f"line {i}\n".encode() for i in range(5, 11))
    assert len(rolled) <= 60 < len(rolled) + len(b"line 11\n")
    assert path.read_bytes() == b"line 11\n"


def test_a_failed_write_is_retried_line_by_line_so_a_passing_fault_loses_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "controller.log"
    writer = LineWriter(path)
    FailingFile.fail_next = 2  # the batch's write and its first line's retry fail
    writer.write_lines([f"line {i}" for i in range(4)])
    writer.write("next")
    writer.close()
    assert path.read_bytes() == b"line 1\nline 2\nline 3\nnext\n"  # only the line refused twice is lost
    err = capsys.readouterr().err
    assert "Input/output error" in err and "1 line(s) (7 bytes) lost" in err


def test_a_write_failing_when_the_loop_turns_is_reported_not_raised_into_the_loop(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import asyncio

    path = tmp_path / "state-change.log"
    writer = LineWriter(path)
    errors: list[dict[str, Any]] = []

    async def burst() -> None:
        asyncio.get_running_loop().set_exception_handler(lambda loop, context: errors.append(context))
        FailingFile.room = 0
        writer.write("refused")
        await asyncio.sleep(0)  # the flush runs
        FailingFile.room = None
        writer.write("kept")
        await asyncio.sleep(0)

    asyncio.run(burst())
    writer.close()
    assert errors == []
    assert path.read_bytes() == b"kept\n"
    assert "1 line(s) (8 bytes) lost" in capsys.readouterr().err


def test_a_failed_roll_over_keeps_writing_to_the_current_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "server.log"
    writer = LineWriter(path, max_bytes=20, backups=2)
    writer.write("a" * 15)
    replace = os.replace

    def refused(source: str, target: str) -> None:
        raise PermissionError(errno.EACCES, "Permission denied", source)

    monkeypatch.setattr(line_writer.os, "replace", refused)
    writer.write("b" * 15)  # the roll-over's rename is refused: the line goes to the current file
    monkeypatch.setattr(line_writer.os, "replace", replace)
    writer.write("c" * 15)  # the next roll-over works
    writer.close()
    assert (tmp_path / "server.log.1").read_text() == "a" * 15 + "\n" + "b" * 15 + "\n"
    assert path.read_text() == "c" * 15 + "\n"
    err = capsys.readouterr().err
    assert "Permission denied" in err and f"rolling {path} over failed; writing on to it" in err


def test_a_path_writer_left_without_its_file_still_writes_its_lines_when_collected(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A roll-over and the reopen after it failed (disk full): the writer has no file and a line buffered whose
    flush a stopped loop never ran. Collected once the disk is back, it writes the line (it used to be dropped
    silently once stream writers stopped closing when collected)."""
    import asyncio
    import gc

    path = tmp_path / "server.log"
    writer = LineWriter(path, max_bytes=10, backups=1)
    writer.write("0123456789")  # no loop: written at once, at the limit
    full = [True]
    real_open, real_replace = line_writer._open_append, os.replace

    def open_unless_full(p: Path) -> Any:
        if full[0]:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_open(p)

    def replace_unless_full(a: Any, b: Any) -> None:
        if full[0]:
            raise OSError(errno.ENOSPC, "No space left on device")
        real_replace(a, b)

    monkeypatch.setattr(line_writer, "_open_append", open_unless_full)
    monkeypatch.setattr(line_writer.os, "replace", replace_unless_full)
    loop = asyncio.new_event_loop()
    held: list[Any] = [writer, loop]

    def write_then_stop() -> None:
        held[0].write("after the failed roll-over")
        held[1].stop()

    loop.call_soon(write_then_stop)
    loop.run_forever()
    loop.close()  # its queued flush never runs
    assert writer._file is None and writer._pending
    full[0] = False
    del writer, loop
    held.clear()
    gc.collect()
    assert "after the failed roll-over\n" in "".join(p.read_text() for p in tmp_path.glob("server.log*"))
