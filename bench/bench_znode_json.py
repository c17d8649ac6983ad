"""What Jackson-exact znode JSON costs: `dumps` (Python's C encoder, kept when its bytes are Jackson's, else the
Jackson writer) against the C encoder alone (the writer before: ``_ENCODER.encode(value).encode("utf-8")``, which
wrote lower-case escapes, raw astral characters and failed on a lone surrogate).

Cases: 50,000 partition-state documents one by one (`dumps`), the same leaderships through the controller's bulk
path (`TopicPartitionStateZNode.encode_all`, which formats plain ints itself and never reaches `dumps`), and the
topic znodes' documents of 5,000 topics of 10 partitions. Floor, same run: the bare loop over the
inputs. Medians of several rounds, the old and new writers alternated. Prints figures; asserts nothing about speed. Run:

    uv run python bench/bench_znode_json.py [--rounds 9]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from collections.abc import Callable
from typing import Any

from zkcontroller.model import LeaderAndIsr, TopicId
from zkcontroller.zk.json_fields import _ENCODER, dumps
from zkcontroller.zk.znodes.topics import TopicPartitionStateZNode

N = 50_000


def _old_dumps(value: Any) -> bytes:
    return _ENCODER.encode(value).encode("utf-8")


def _ms(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    lais = [LeaderAndIsr(1 + i % 5, i % 97, (1 + i % 5, 1 + (i + 1) % 5, 1 + (i + 2) % 5), i % 13) for i in range(N)]
    docs = [{"controller_epoch": 7, "leader": lai.leader, "version": 1, "leader_epoch": lai.leader_epoch,
             "isr": list(lai.isr)} for lai in lais]
    topics = [{"version": 3, "partitions": {str(p): [1 + p % 5, 1 + (p + 1) % 5, 1 + (p + 2) % 5] for p in range(10)},
               "adding_replicas": {}, "removing_replicas": {}, "topic_id": str(TopicId(os.urandom(16)))}
              for _ in range(N // 10)]

    cases: dict[str, Callable[[], Any]] = {
        "floor: bare loop over 50k documents": lambda: [d for d in docs],
        "50k partition states, C encoder alone (before)": lambda: [_old_dumps(d) for d in docs],
        "50k partition states, dumps (after)": lambda: [dumps(d) for d in docs],
        "50k partition states, encode_all (controller path)": lambda: TopicPartitionStateZNode.encode_all(lais, 7),
        "5k topic znodes x 10 partitions, C encoder (before)": lambda: [_old_dumps(d) for d in topics],
        "5k topic znodes x 10 partitions, dumps (after)": lambda: [dumps(d) for d in topics],
    }
    assert [dumps(d) for d in docs] == [_old_dumps(d) for d in docs] == TopicPartitionStateZNode.encode_all(lais, 7)
    assert [dumps(d) for d in topics] == [_old_dumps(d) for d in topics]
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(args.rounds):
        for name, fn in cases.items():
            times[name].append(_ms(fn))
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, "
          f"Python {platform.python_version()}, {args.rounds} rounds")
    for name, values in times.items():
        print(f"  {name:<52} median {statistics.median(values):8.2f} ms  min {min(values):8.2f} ms")


if __name__ == "__main__":
    main()
