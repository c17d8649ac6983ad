"""The WARN for each unclean election an enabled ``unclean.leader.election.enable`` causes
(`UncleanElectionEvents._trigger_online_partition_state_change`).

The state machine counts every unclean election of the batch before any line is logged; each line printed that
batch total, so three elections each said "so far: 3"."""

from __future__ import annotations

import logging
from types import SimpleNamespace
from typing import Any

import pytest

from zkcontroller.controller.events import UncleanLeaderElectionEnable
from zkcontroller.controller.unclean_election import UNCLEAN_ELECTION_LOGGER, UncleanElectionEvents
from zkcontroller.model import LeaderAndIsr, TopicPartition

OLD = {TopicPartition("t", p): LeaderAndIsr(-1, 3, (9,)) for p in range(3)}
"""Three offline partitions whose last ISR member (broker 9) is gone: each election is unclean."""


def _family() -> UncleanElectionEvents:
    stats = SimpleNamespace(unclean_leader_elections=2)  # two earlier in this controller's tenure

    async def elect(_topic: str | None) -> dict[TopicPartition, LeaderAndIsr]:
        results = {}
        for tp in OLD:  # as `election.elect_offline`: counted as each is elected, before the caller logs any
            stats.unclean_leader_elections += 1
            results[tp] = LeaderAndIsr(1, 4, (1,))
        return results

    context = SimpleNamespace(all_partitions=list(OLD), partition_leader_and_isr=OLD.get, stats=stats)
    core: Any = SimpleNamespace(is_active=True, controller_id=1, context=context, log=logging.getLogger("test"),
                                partition_state_machine=SimpleNamespace(trigger_online_partition_state_change=elect))
    return UncleanElectionEvents(core)


async def test_each_unclean_election_line_counts_itself(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger=UNCLEAN_ELECTION_LOGGER):
        await _family().process_unclean_leader_election_enable(UncleanLeaderElectionEnable())
    counts = [r.getMessage().rsplit("so far: ", 1)[1].rstrip(")") for r in caplog.records
              if "Unclean leader election for partition" in r.getMessage()]
    assert counts == ["3", "4", "5"]  # each said 5, the batch's total
