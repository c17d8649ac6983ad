"""``demo --zookeeper`` on a ZooKeeper that already holds the demo's topics says how to get a clean one.

A real ZooKeeper keeps its data across runs (`zkcontroller zookeeper` too), so a second ``demo --zookeeper``, or
one after the README's walk-through created ``orders``, stopped at its first step with only "Topic 'orders' already
exists.". The demo's run is replaced by its failure; the connect string names no server (nothing connects)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from zkcontroller.cli import main
from zkcontroller.cluster import demo

pytestmark = pytest.mark.usefixtures("restored_logging")  # the CLI run in-process sets kazoo's level

EXISTS = "demo step `create orders 6 3` failed: Topic 'orders' already exists."


def _fail_with(monkeypatch: pytest.MonkeyPatch, message: str) -> None:
    async def failing(*_: Any, **__: Any) -> Path:
        raise demo.DemoStepFailed(message)

    monkeypatch.setattr(demo, "run_demo", failing)


@pytest.mark.parametrize("zookeeper", ["127.0.0.1:1", "127.0.0.1:1/old-demo"])
def test_an_existing_topic_on_zookeeper_gets_the_chroot_hint(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                             zookeeper: str) -> None:
    _fail_with(monkeypatch, EXISTS)
    result = CliRunner().invoke(main, ["demo", "--zookeeper", zookeeper, "--log-dir", str(tmp_path),
                                       "--no-listeners"])
    assert result.exit_code == 1, result.output
    assert result.output.strip().splitlines()[-1] == (
        f"Error: {EXISTS} (ZooKeeper keeps its data between runs: give the demo a chroot no earlier run used, "
        "e.g. --zookeeper 127.0.0.1:1/demo-2)")


def test_the_embedded_store_and_other_failures_get_no_hint(monkeypatch: pytest.MonkeyPatch,
                                                           tmp_path: Path) -> None:
    _fail_with(monkeypatch, EXISTS)  # cannot happen on the embedded store, which starts empty: no hint to give
    embedded = CliRunner().invoke(main, ["demo", "--log-dir", str(tmp_path), "--no-listeners"])
    assert embedded.output.strip().splitlines()[-1] == f"Error: {EXISTS}"
    _fail_with(monkeypatch, "demo step `stop 9` failed: no broker 9")
    other = CliRunner().invoke(main, ["demo", "--zookeeper", "127.0.0.1:1", "--log-dir", str(tmp_path),
                                      "--no-listeners"])
    assert other.output.strip().splitlines()[-1] == "Error: demo step `stop 9` failed: no broker 9"
