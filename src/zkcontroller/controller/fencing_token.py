"""`FencingToken`: the controller epoch and ``/controller_epoch``'s zkVersion of one controller tenure."""

from __future__ import annotations

from dataclasses import dataclass

from zkcontroller.model import INITIAL_CONTROLLER_EPOCH, INITIAL_CONTROLLER_EPOCH_ZK_VERSION


@dataclass(frozen=True, slots=True)
class FencingToken:
    """What fences this controller's writes and requests: its epoch and ``/controller_epoch``'s zkVersion,
    captured together when it won the election (spec §2.4). A write checks the version; a request carries
    the epoch."""

    epoch: int
    epoch_zk_version: int


NOT_CONTROLLER = FencingToken(INITIAL_CONTROLLER_EPOCH, INITIAL_CONTROLLER_EPOCH_ZK_VERSION)
"""The token of a broker that is not controller: every fenced write made with it fails."""
