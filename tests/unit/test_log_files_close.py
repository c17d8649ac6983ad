"""A run's ``events.jsonl`` keeps the lines an event log still holds when the run's files close.

`EventLog.flush_soon` writes a step's lines in the loop's turn after its event; a run stopped in that turn (Ctrl-C
at the cluster prompt) closed its files with those lines unwritten."""

from __future__ import annotations

from pathlib import Path

from zkcontroller.cluster.logs import LogFiles


def test_close_writes_the_lines_an_event_log_holds(tmp_path: Path) -> None:
    files = LogFiles(tmp_path, lambda: 1767225665000)
    try:
        event_log = files.event_log("c1", lambda: 1767225665000)
        event_log.write_lines(iter(['{"type":"held","n":1}', '{"type":"held","n":2}']), [])
        assert (tmp_path / "events.jsonl").read_text() == ""  # held until the next loop turn (or close)
    finally:
        files.close()
    assert (tmp_path / "events.jsonl").read_text().splitlines() == ['{"type":"held","n":1}', '{"type":"held","n":2}']
