"""scripts/soak.py's arguments: a run's options reach its `SoakConfig`, and a mistyped fault kind or a broker count
no fault could be survived with is refused with a clear message (exit 2) before any process starts."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "soak.py"


def script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("soak_script", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_options_reach_the_config() -> None:
    config = script().parse(["--brokers", "4", "--minutes", "2", "--seed", "9", "--zookeeper-ensemble", "3",
                             "--faults", "kill,term", "--restart-after-expiry", "--interval", "1", "3"])
    assert (config.brokers, config.duration_s, config.seed, config.zookeeper_ensemble) == (4, 120, 9, 3)
    assert config.faults == ("kill", "term") and config.restart_after_expiry and config.interval_s == (1.0, 3.0)


@pytest.mark.parametrize(("argv", "said"), [
    (["--faults", "kill,explode"], "unknown fault kinds ['explode']"),
    (["--brokers", "1"], "--brokers must be at least 2"),
    (["--interval", "5", "1"], "--interval MIN_S MAX_S"),
])
def test_bad_arguments_are_refused_with_a_reason(argv: list[str], said: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        script().parse(argv)
    assert exit_.value.code == 2 and said in capsys.readouterr().err


def test_a_later_fault_kind_is_named_not_drawn_by_default() -> None:
    """A recorded seed (docs/soak.md) must draw the same faults again: the default kinds stay those it was run with,
    and a kind added since (term-kill-controller) is asked for by name."""
    module = script()
    assert module.parse([]).faults == ("kill", "kill-controller", "pause-short", "pause-long", "pause-controller",
                                       "term", "zk-kill", "preferred-election", "reassign")
    assert module.parse(["--faults", "term-kill-controller,kill"]).faults == ("term-kill-controller", "kill")
