"""`LineWriter`: lines reach the file by the end of the event-loop turn that wrote them (at once without a
loop), files roll by size as Log4j's RollingFileAppender, and a bad line or a late one loses nothing else."""

from __future__ import annotations

import asyncio
import gc
import io
import logging
import subprocess
import sys
from pathlib import Path

import pytest

from zkcontroller.cluster.line_writer import LineWriter, LineWriterHandler
from zkcontroller.cluster.logs import KafkaFormatter


def test_inside_a_loop_lines_are_flushed_when_the_loop_turns(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    writer = LineWriter(path)

    async def burst() -> tuple[str, str]:
        for i in range(3):
            writer.write(f"line {i}")
        before = path.read_text()
        await asyncio.sleep(0)  # one turn of the loop
        return before, path.read_text()

    before, after = asyncio.run(burst())
    writer.close()
    assert before == ""  # buffered: one flush for the burst, not one per line
    assert after == "line 0\nline 1\nline 2\n"


def test_a_loop_stopped_before_its_flush_does_not_hold_later_lines_back(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    writer = LineWriter(path)
    loop = asyncio.new_event_loop()

    def write_then_stop() -> None:
        writer.write("last line of the loop")
        loop.stop()  # the flush it queued is not in this batch of callbacks: it never runs

    loop.call_soon(write_then_stop)
    loop.run_forever()
    loop.close()
    writer.write("after the loop")  # no loop now: flushed at once, with what the stopped loop left
    assert path.read_text() == "last line of the loop\nafter the loop\n"
    writer.close()


def test_without_a_loop_every_line_is_flushed_at_once(tmp_path: Path) -> None:
    path = tmp_path / "controller.log"
    writer = LineWriter(path)
    writer.write("first")
    assert path.read_text() == "first\n"
    writer.close()


def test_close_flushes_what_is_left_and_late_lines_are_ignored(tmp_path: Path) -> None:
    path = tmp_path / "x.log"
    writer = LineWriter(path)

    async def write_and_close() -> None:
        writer.write("kept")
        writer.close()  # before the loop turns
        writer.write("after close")  # a component still shutting down: no error, nothing written

    asyncio.run(write_and_close())
    assert path.read_text() == "kept\n"


def test_appends_to_an_existing_file_and_counts_its_size(tmp_path: Path) -> None:
    path = tmp_path / "state-change.log"
    path.write_text("x" * 90 + "\n")
    writer = LineWriter(path, max_bytes=100, backups=1)
    writer.write("y" * 20)  # 91 + 21 > 100: the existing content rolls first
    writer.close()
    assert (tmp_path / "state-change.log.1").read_text() == "x" * 90 + "\n"
    assert path.read_text() == "y" * 20 + "\n"


def test_rolls_by_size_keeping_backups_with_the_namer(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"

    def namer(default: str) -> str:  # events.jsonl.2 -> events.2.jsonl
        stem, _, index = default.rpartition(".")
        return f"{stem.removesuffix('.jsonl')}.{index}.jsonl"

    writer = LineWriter(path, max_bytes=50, backups=2, namer=namer)
    for i in range(20):
        writer.write(f"record {i:02d} padding")  # 18 bytes with the newline: two lines per file
    writer.close()
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["events.1.jsonl", "events.2.jsonl", "events.jsonl"]
    assert all(p.stat().st_size <= 50 for p in tmp_path.iterdir())
    assert path.read_text().splitlines() == ["record 18 padding", "record 19 padding"]
    assert (tmp_path / "events.2.jsonl").read_text().splitlines()[0] == "record 14 padding"


def test_a_line_longer_than_the_cap_is_written_whole(tmp_path: Path) -> None:
    path = tmp_path / "big.log"
    writer = LineWriter(path, max_bytes=10, backups=1)
    writer.write("a" * 30)
    writer.write("b")
    writer.close()
    assert (tmp_path / "big.log.1").read_text() == "a" * 30 + "\n"
    assert path.read_text() == "b\n"


def test_unencodable_text_is_escaped_not_lost(tmp_path: Path) -> None:
    path = tmp_path / "x.log"
    writer = LineWriter(path)
    writer.write("bad \udcff byte")  # a lone surrogate, as surrogateescape leaves undecodable input
    writer.write("next")
    writer.close()
    assert path.read_bytes() == b"bad \\udcff byte\nnext\n"


def test_a_stream_target_is_written_and_flushed_the_same_way() -> None:
    stream = io.StringIO()
    writer = LineWriter(stream=stream)
    writer.write("to stderr")
    assert stream.getvalue() == "to stderr\n"


def test_needs_exactly_one_target(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="exactly one"):
        LineWriter()
    with pytest.raises(ValueError, match="exactly one"):
        LineWriter(tmp_path / "a", stream=io.StringIO())


def test_handler_writes_kafka_layout_and_survives_a_failing_format(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "controller.log"
    handler = LineWriterHandler(LineWriter(path))
    handler.setFormatter(KafkaFormatter(lambda: 1_764_131_234_567))
    logger = logging.getLogger("kafka.controller.test_line_writer")
    logger.addHandler(handler)
    logger.propagate = False
    logger.setLevel(logging.INFO)
    try:
        logger.info("Broker failure callback for %s", 3)
        logger.info("bad %d", "not a number")  # a formatting error is reported by logging, not raised
        logger.warning("Resigning")
    finally:
        logger.removeHandler(handler)
        logger.propagate = True
        logger.setLevel(logging.NOTSET)
        handler.close()
    assert path.read_text().splitlines() == [
        "[2025-11-26 04:27:14,567] INFO Broker failure callback for 3 (kafka.controller.test_line_writer)",
        "[2025-11-26 04:27:14,567] WARN Resigning (kafka.controller.test_line_writer)",
    ]
    assert "not a number" in capsys.readouterr().err


def test_formatter_time_is_right_across_seconds() -> None:
    clock = iter([1_000_999, 1_001_000, 999])
    formatter = KafkaFormatter(lambda: next(clock))
    record = logging.makeLogRecord({"msg": "m", "levelno": logging.INFO, "levelname": "INFO", "name": "n"})
    assert [formatter.formatTime(record) for _ in range(3)] == [
        "1970-01-01 00:16:40,999", "1970-01-01 00:16:41,000", "1970-01-01 00:00:00,999"]



@pytest.mark.parametrize("direct", [True, False])
def test_controller_lines_written_without_a_record_are_the_lines_logging_writes(tmp_path: Path, direct: bool) -> None:
    """`PrefixedLogger` hands its line to the log file's handler directly (`write_direct`); the same calls through
    `logging` (a pass-through filter on the logger turns the direct path off) must give the same file."""
    from zkcontroller.cluster.logs import LogFiles
    from zkcontroller.controller.event_log import PrefixedLogger

    clock = iter(range(1767225665000, 1767225665000 + 10_000, 700))
    files = LogFiles(tmp_path, lambda: next(clock), trace=True)
    state_change = logging.getLogger("state.change.logger")
    calls: list[str] = []
    original = LineWriterHandler.write_direct

    def counting(self: LineWriterHandler, name: str, levelno: int, message: str) -> bool:
        calls.append(message)
        return original(self, name, levelno, message)

    def pass_all(record: logging.LogRecord) -> bool:
        return True

    if not direct:
        state_change.addFilter(pass_all)
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(LineWriterHandler, "write_direct", counting)
            log = PrefixedLogger("state.change.logger", "[Controller id=1 epoch=3] ")
            log.trace("a trace line with 100% of its % signs")
            log.debug("a debug line")
            log.info("Changed partition t-0 from OfflinePartition to OnlinePartition")
            log.warn("a warning")
            log.error("an error")
            log.error("an error with its exception", ValueError("bad"))  # always through logging
    finally:
        state_change.removeFilter(pass_all)
        files.close()
    text = (tmp_path / "state-change.log").read_text()
    assert len(calls) == (5 if direct else 0)
    lines = text.splitlines()
    assert lines[:6] == [
        "[2026-01-01 00:01:05,000] TRACE [Controller id=1 epoch=3] a trace line with 100% of its % signs "
        "(state.change.logger)",
        "[2026-01-01 00:01:05,700] DEBUG [Controller id=1 epoch=3] a debug line (state.change.logger)",
        "[2026-01-01 00:01:06,400] INFO [Controller id=1 epoch=3] Changed partition t-0 from OfflinePartition to "
        "OnlinePartition (state.change.logger)",
        "[2026-01-01 00:01:07,100] WARN [Controller id=1 epoch=3] a warning (state.change.logger)",
        "[2026-01-01 00:01:07,800] ERROR [Controller id=1 epoch=3] an error (state.change.logger)",
        "[2026-01-01 00:01:08,500] ERROR [Controller id=1 epoch=3] an error with its exception (state.change.logger)",
    ]
    assert lines[6:] == ["ValueError: bad"]


def test_a_handler_that_is_not_kafkas_layout_or_filters_is_left_to_logging(tmp_path: Path) -> None:
    handler = LineWriterHandler(LineWriter(tmp_path / "x.log"))
    handler.setFormatter(logging.Formatter("%(message)s"))
    assert not handler.write_direct("state.change.logger", logging.INFO, "m")
    handler.setFormatter(KafkaFormatter(lambda: 0))
    handler.setLevel(logging.WARNING)
    assert not handler.write_direct("state.change.logger", logging.INFO, "below the handler's level")
    handler.setLevel(logging.NOTSET)
    handler.addFilter(lambda record: False)
    assert not handler.write_direct("state.change.logger", logging.INFO, "filtered")
    handler.close()
    assert (tmp_path / "x.log").read_text() == ""


def test_a_message_with_an_exception_line_puts_it_after_the_logger_as_kafka_prints_a_throwable() -> None:
    """``msg\\na.b.SomeError: why`` is written ``[ts] WARN msg (logger)`` then ``a.b.SomeError: why``, where Kafka's
    log4j layout prints the throwable, so `zkcontroller analyze` reads the second line as the record's
    continuation; a traceback follows too. One line stays one line."""
    formatter = KafkaFormatter(lambda: 1767225665123)
    record = logging.makeLogRecord({"name": "kafka.controller.RequestSendThread", "levelno": logging.WARNING,
                                    "levelname": "WARNING", "msg": "fails to send.\n%s", "args": ("x.y.Down: gone",)})
    assert formatter.format(record) == ("[2026-01-01 00:01:05,123] WARN fails to send. "
                                        "(kafka.controller.RequestSendThread)\nx.y.Down: gone")
    try:
        raise ValueError("bad")
    except ValueError as e:
        with_trace = logging.makeLogRecord({"name": "kafka.x", "levelno": logging.ERROR, "levelname": "ERROR",
                                            "msg": "failed", "exc_info": (type(e), e, e.__traceback__)})
    text = formatter.format(with_trace)
    assert text.startswith("[2026-01-01 00:01:05,123] ERROR failed (kafka.x)\nTraceback (most recent call last):")
    assert text.endswith("ValueError: bad")
    assert formatter.line("kafka.x", logging.INFO, "one line", 0) == "[2026-01-01 00:01:05,123] INFO one line (kafka.x)"


@pytest.mark.parametrize("max_bytes", [0, 10, 25, 1000])
def test_write_lines_writes_and_rolls_as_a_write_per_line(tmp_path: Path, max_bytes: int) -> None:
    """A batch of lines (the event log's per-step lines) leaves the same files as one `write` per line, with
    any roll-over between the same two lines."""
    lines = ["first", "second line", "é non-ascii", "\udcff lone surrogate", "x" * 12, "last"]
    for name, batched in (("one", False), ("many", True)):
        (tmp_path / name).mkdir()
        writer = LineWriter(tmp_path / name / "events.jsonl", max_bytes=max_bytes, backups=5)
        writer.write("before")
        if batched:
            writer.write_lines(lines[:3])
            writer.write_lines([])
            writer.write_lines(lines[3:])
        else:
            for line in lines:
                writer.write(line)
        writer.close()
    one = {p.name: p.read_bytes() for p in (tmp_path / "one").iterdir()}
    many = {p.name: p.read_bytes() for p in (tmp_path / "many").iterdir()}
    assert one == many
    assert (len(one) > 1) == (0 < max_bytes < 50)


def test_write_lines_to_a_stream() -> None:
    stream = io.StringIO()
    writer = LineWriter(stream=stream)
    writer.write_lines(["a", "b"])
    writer.write("c")
    assert stream.getvalue() == "a\nb\nc\n"


def _buffered_in_a_stopped_loop(writer: LineWriter, line: str) -> None:
    """Write ``line`` in a loop stopped before the flush it queued can run: it stays buffered."""
    loop = asyncio.new_event_loop()

    def write_then_stop() -> None:
        writer.write(line)
        loop.stop()

    loop.call_soon(write_then_stop)
    loop.run_forever()
    loop.close()


def test_a_writer_collected_without_close_writes_what_it_buffered(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    writer = LineWriter(path)
    _buffered_in_a_stopped_loop(writer, "buffered")
    assert path.read_text() == ""  # still pending: the loop never turned
    del writer
    gc.collect()
    assert path.read_text() == "buffered\n"


def test_a_writer_alive_at_exit_writes_what_it_buffered(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    script = (
        "import asyncio, sys\n"
        "from pathlib import Path\n"
        "from zkcontroller.cluster.line_writer import LineWriter\n"
        f"writer = LineWriter(Path({str(path)!r}))\n"
        "loop = asyncio.new_event_loop()\n"
        "def write_then_stop():\n"
        "    writer.write('last event')\n"
        "    loop.stop()\n"
        "loop.call_soon(write_then_stop)\n"
        "loop.run_forever()\n"
        f"assert Path({str(path)!r}).read_text() == ''\n"
        "sys.exit(3)  # never closed\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 3, done.stderr
    assert path.read_text() == "last event\n"


def test_a_stream_writer_whose_stream_its_owner_closed_reports_no_loss() -> None:
    """A stream writer buffers nothing: collected, or alive at exit, after its owner closed the stream (a
    broker's stderr pipe gone), it must not report lines lost. It used to, twice: once from the exit flush and
    once from its collection."""
    script = (
        "import gc, io\n"
        "from zkcontroller.cluster.line_writer import LineWriter\n"
        "collected = io.StringIO()\n"
        "writer = LineWriter(stream=collected)\n"
        "writer.write('a')\n"
        "assert collected.getvalue() == 'a\\n'\n"
        "collected.close()\n"
        "del writer\n"
        "gc.collect()\n"
        "kept = io.TextIOWrapper(io.BytesIO())\n"
        "alive_at_exit = LineWriter(stream=kept)\n"
        "alive_at_exit.write('b')\n"
        "kept.close()\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stderr) == (0, "")
