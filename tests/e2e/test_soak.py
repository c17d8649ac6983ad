"""The chaos soak (scripts/soak.py, docs/soak.md) run short, so that it cannot rot: three broker processes, a real
ZooKeeper, the producer workload, four seeded faults with short sessions (pauses shorter and longer than the
session, the controller SIGKILLed and started again before its session expired, a controlled shutdown), each healed
before the next, then the final heal; every check must pass. The kill is finding F1's shape (docs/soak.md): a
restarted broker that came back without its logs' offsets would answer a high watermark below an acknowledged
offset, which `high-watermark-monotonic` names: with the broker process's offsets journal not read back at start,
this run fails so (leader 2 answering high watermark 0 below 30-odd acknowledged), checked 2026-11-28. The
checker's own failures are planted in tests/unit/test_soak_checks.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.helpers import tool_missing

from zkcontroller.cluster.soak import Soak, SoakConfig, SoakFailure
from zkcontroller.cluster.zookeeper_server import ZooKeeperNotInstalled

pytestmark = [pytest.mark.zookeeper, pytest.mark.timeout(280)]


def test_a_short_soak_injects_its_faults_and_every_check_passes(tmp_path: Path) -> None:
    import asyncio

    lines: list[str] = []
    config = SoakConfig(brokers=3, duration_s=150, seed=210, directory=tmp_path / "soak", session_timeout_ms=6000,
                        interval_s=(1.0, 2.0), max_faults=4,
                        faults=("pause-short", "pause-long", "term", "kill-controller"),
                        settle_s=60, heal_between_faults=True, out=lines.append)
    soak = Soak(config)
    try:
        result = asyncio.run(soak.run())
    except ZooKeeperNotInstalled as e:
        tool_missing("zookeeper", str(e))
    report = soak.report(result)
    assert result.violations == [], report + "\n" + "\n".join(lines)
    assert len(result.faults) == 4
    kills = [text for _, text in result.faults if "(SIGKILL)" in text]
    # seed 210 draws the controller's kill second, down 1.1 s: the new process waits on its old registration and
    # re-registers the moment the session expires, before the next controller reads the brokers (F1's shape)
    assert len(kills) == 1 and "start again after 1.1 s" in kills[0], result.faults
    killed = int(kills[0].split("broker ", 1)[1].split(" ", 1)[0])
    assert soak.led_with_acks.get(killed), f"broker {killed} led no partition with acknowledged records: {report}"
    assert result.checks_passed >= 6 and result.acknowledged > 0, report
    assert "soak passed" in report


def test_a_violation_fails_the_run_and_keeps_the_history(tmp_path: Path) -> None:
    """A planted violation raised mid-run is what the report names, with the fault history and broker logs."""
    from zkcontroller.cluster.soak_checks import Violation

    soak = Soak(SoakConfig(brokers=2, seed=1, directory=tmp_path / "soak", out=lambda _: None))
    soak.history.append((1.0, "kill broker 1 (SIGKILL)"))
    try:
        soak.fail([Violation("one-leader-per-epoch", "t-0: leader epoch 3 led by broker 1 and by broker 2")])
    except SoakFailure as e:
        from zkcontroller.cluster.soak import SoakResult

        result = SoakResult(e.violations, soak.history, 0, 2.0, soak.cluster.directory, 0)
    report = soak.report(result)
    assert "VIOLATIONS" in report and "one-leader-per-epoch" in report and "kill broker 1" in report
    assert str(soak.cluster.brokers[1].log) in report and result.directory.exists()
