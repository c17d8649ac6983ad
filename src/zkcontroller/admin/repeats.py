"""`repeated`: the items of a list named more than once, in one pass.

The admin inputs that Kafka refuses for a repeat (election and reassignment JSON files, broker lists,
IncrementalAlterConfigs' keys) can be long (an election file of every partition, a request of 100,000 keys);
``[x for x in items if items.count(x) > 1]`` is quadratic in their length.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable
from typing import TypeVar

T = TypeVar("T", bound=Hashable)


def repeated(items: Iterable[T]) -> list[T]:
    """Each item that occurs more than once, once, in the order of its first occurrence."""
    counts = Counter(items)
    return [item for item, n in counts.items() if n > 1]
