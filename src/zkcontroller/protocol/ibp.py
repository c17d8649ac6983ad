"""``inter.broker.protocol.version``: parsing and the switches Kafka 2.8 reads from it (ApiVersion's role).

One parser for the controller and the brokers, so both read the same value the same way.
"""

from __future__ import annotations

import re

_IBP = re.compile(r"^(\d+(?:\.\d+){1,2})(?:-IV(\d+))?$")
_LATEST_IV = 99
"""A version without ``-IVn`` ("2.7") means its newest internal version, as Kafka's ApiVersion does."""

ALTER_ISR_MIN_IBP = "2.7-IV2"
"""From here on a leader proposes ISR changes to the controller (AlterIsr) instead of writing ZooKeeper."""
FEATURE_VERSIONING_MIN_IBP = "2.7-IV0"
"""From here on the controller maintains ``/feature`` (KIP-584)."""
DEFAULT_IBP = "2.8-IV1"


def parse_ibp(value: str) -> tuple[tuple[int, ...], int]:
    """``"2.7-IV2"`` → ((2, 7), 2): comparable inter-broker protocol versions. Raises ValueError naming the value."""
    match = _IBP.match(value.strip())
    if match is None:
        raise ValueError(f"inter.broker.protocol.version: {value!r} is not a version such as 2.8-IV1 or 2.6")
    numbers = tuple(int(n) for n in match.group(1).split("."))
    if numbers[0] == 0 and len(numbers) == 2:  # "0.10" → 0.10.0
        numbers = (*numbers, 0)
    return numbers, _LATEST_IV if match.group(2) is None else int(match.group(2))


def ibp_at_least(value: str, minimum: str) -> bool:
    return parse_ibp(value) >= parse_ibp(minimum)


def alter_isr_enabled(value: str) -> bool:
    """Kafka's ``isAlterIsrSupported``: leaders send AlterIsr, so only the controller writes partition states."""
    return ibp_at_least(value, ALTER_ISR_MIN_IBP)
