"""pytest-timeout's timeout ends an asyncio test as a timeout (`tests/asyncio_timeout.py`). Its SIGALRM handler
raised ``Failed`` in whatever task step ran, asyncio kept it in that task, and the test ran on past its timeout to
fail for a made-up reason: here, the main coroutine's wait for the dead worker runs out. A run of its own, with a
2 s timeout and a main coroutine that would wait 8 s, in each way the project runs a loop: ``asyncio.run`` in a
sync test, an async test and an async fixture (pytest-asyncio), and a test that catches KeyboardInterrupt as the
CLI's ``stopped`` does, runs a loop again and then fails for a reason of its own."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_TESTS = '''
import asyncio
from pathlib import Path

import pytest

WENT_ON = Path({went_on!r})


def _work() -> None:
    for _ in range(100_000):  # a step's work in bytecode, where a signal's handler runs: the alarm lands here
        pass


async def _main(name: str) -> None:
    """A worker task does the work; the main coroutine waits for it, bounded well past the 2 s timeout."""
    done = asyncio.Event()

    async def worker() -> None:
        while True:
            _work()
            await asyncio.sleep(0)

    task = asyncio.create_task(worker())
    try:
        await asyncio.wait_for(done.wait(), 8.0)
    except TimeoutError:
        with WENT_ON.open("a") as f:
            f.write(name + "\\n")
        raise
    task.cancel()


def test_asyncio_run() -> None:
    asyncio.run(_main("asyncio_run"))


async def test_async() -> None:
    await _main("async")


@pytest.fixture
async def slow_fixture():
    await _main("async_fixture")
    yield


async def test_async_fixture(slow_fixture) -> None:
    pass


def test_interrupt_caught() -> None:
    for attempt in range(2):
        try:
            asyncio.run(_main(f"caught-{{attempt}}"))
        except KeyboardInterrupt:
            pass  # as the CLI's "stopped"
    raise AssertionError("a reason of its own")
'''


def test_a_timed_out_asyncio_test_ends_as_a_timeout(tmp_path: Path) -> None:
    went_on = tmp_path / "went-on"
    went_on.touch()
    test_file = tmp_path / "test_loops.py"
    test_file.write_text(textwrap.dedent(_TESTS).format(went_on=str(went_on)))
    junit = tmp_path / "junit.xml"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.conftest",
         "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(tmp_path), "--timeout", "2",
         "--junitxml", str(junit), str(test_file)],
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    output = done.stdout + done.stderr
    timeout = "Failed: Timeout (>2.0s) from pytest-timeout."
    outcomes = {}
    for case in ET.parse(junit).iter("testcase"):
        problems = [e.get("message", "") for e in case if e.tag in ("failure", "error")]
        # a setup error's message reads 'failed on setup with "..."'
        outcomes[case.get("name")] = "timeout" if problems and timeout in problems[0] else (problems or ["passed"])[0]
    assert outcomes == {name: "timeout" for name in
                        ("test_asyncio_run", "test_async", "test_async_fixture", "test_interrupt_caught")}, output
    assert went_on.read_text() == "", f"main coroutines waited past the timeout: {went_on.read_text()!r}\n{output}"
    assert "a reason of its own" in output, output  # the error the test went on to: the timeout's cause
