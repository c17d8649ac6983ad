"""The warning for a new life of a cluster says how its controller epoch follows the last one's: two runs on the
embedded store, both at epoch 1, read "controller epoch goes back from 1 to 1"."""

from __future__ import annotations

from tests.analytics.test_controller_timeline import _tenure

from zkcontroller.analytics.controller_timeline import classify


def _warning(previous: int, epoch: int) -> str:
    [warning] = classify([_tenure(1, previous, 0, 1_000), _tenure(1, epoch, 5_000, 6_000, life=1)]).warnings
    return warning


def test_an_equal_epoch_starts_over_and_a_lower_one_goes_back() -> None:
    assert "controller epoch starts over at 1 (after epoch 1) at " in _warning(1, 1)
    assert "goes back" not in _warning(1, 1)
    assert "controller epoch goes back from 7 to 2 at " in _warning(7, 2)
    assert "--cluster-pattern" in _warning(1, 1)
