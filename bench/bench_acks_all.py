"""acks=all against acks=1: one-at-a-time produce latency on a 3-broker cluster over loopback (confluent-kafka).

Starts ``zkcontroller cluster --brokers 3 --port-base 0`` (embedded store, in-process brokers, Kafka's wire
protocol on loopback for clients), or with ``--processes`` ``zkcontroller cluster --processes 3`` (broker
processes, the wire protocol between brokers too, a ZooKeeper started for them), creates a topic of one
partition replicated 3 ways, then produces N records one at a time with confluent-kafka (librdkafka, ``linger.ms``
0): each ``produce`` is flushed before the next, so a figure is one
request's round trip. acks=1 (the leader answers after its own append) is the floor measured in the same run;
acks=all waits for both followers to fetch the record and the leader's high watermark to cover it.

``--src DIR`` runs the cluster from another source tree (e.g. ``git archive <commit> src | tar -x -C DIR``), so
the code before a change can be measured in the same window. Prints figures; asserts nothing about speed. Run:

    uv run python bench/bench_acks_all.py [--records 200] [--src /tmp/before/src]
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import statistics
import subprocess
import sys
import time

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

TOPIC = "acks-bench"


def start_cluster(src: str | None, processes: bool) -> tuple[subprocess.Popen[str], str]:
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = src  # ahead of the editable install's path
    brokers = ["--processes", "3"] if processes else ["--brokers", "3", "--port-base", "0"]
    command = [sys.executable, "-c", "from zkcontroller.cli import main; main()", "cluster", *brokers]
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, env=env)
    assert proc.stdout is not None
    address = None
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError("the cluster exited before its prompt")
        found = re.match(r"^(?:broker 1 listens on|cluster up: broker processes 1, 2, 3 on) (127\.0\.0\.1:\d+)",
                         line.strip())
        if found:
            address = found[1]
        if line.startswith("  help | quit"):
            break
    if address is None:
        raise RuntimeError("no address for broker 1")
    admin = AdminClient({"bootstrap.servers": address})
    while time.monotonic() < deadline and len(admin.list_topics(timeout=10).brokers) < 3:
        time.sleep(0.2)
    return proc, address


def stop_cluster(proc: subprocess.Popen[str]) -> None:
    assert proc.stdin is not None
    try:
        proc.stdin.write("quit\n")
        proc.stdin.flush()
        proc.wait(60)
    except (subprocess.TimeoutExpired, BrokenPipeError):
        proc.kill()
        proc.wait(30)


def latencies_ms(address: str, acks: str, records: int) -> list[float]:
    producer = Producer({"bootstrap.servers": address, "acks": acks, "linger.ms": 0, "message.timeout.ms": 60_000})
    failed: list[str] = []

    def report(err: object, _msg: object) -> None:
        if err is not None:
            failed.append(str(err))

    producer.produce(TOPIC, value=b"warm-up", partition=0, on_delivery=report)  # connections and metadata
    producer.flush(60)
    out = []
    for i in range(records):
        start = time.perf_counter()
        producer.produce(TOPIC, value=b"r %d" % i, partition=0, on_delivery=report)
        producer.flush(60)
        out.append((time.perf_counter() - start) * 1000)
    if failed:
        raise RuntimeError(f"{len(failed)} deliveries failed, first: {failed[0]}")
    return out


def summary(values: list[float]) -> str:
    q = statistics.quantiles(values, n=100)
    return f"p50 {q[49]:7.2f} ms  p90 {q[89]:7.2f} ms  p99 {q[98]:7.2f} ms  max {max(values):7.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=200)
    parser.add_argument("--src", help="run the cluster from this source tree (PYTHONPATH)")
    parser.add_argument("--processes", action="store_true",
                        help="three `zkcontroller broker` processes on the wire (a ZooKeeper started for them)")
    args = parser.parse_args()
    print(f"{platform.node()} {platform.processor() or platform.machine()} {os.cpu_count()} cores, "
          f"python {platform.python_version()}, cluster from {args.src or 'this checkout'}, "
          f"{'broker processes (TCP between brokers)' if args.processes else 'in-process brokers'}")
    proc, address = start_cluster(args.src, args.processes)
    try:
        admin = AdminClient({"bootstrap.servers": address})  # kept: a dropped client fails its futures
        admin.create_topics([NewTopic(TOPIC, num_partitions=1, replication_factor=3)])[TOPIC].result(60)
        for acks in ("1", "all", "1", "all"):
            figures = summary(latencies_ms(address, acks, args.records))
            print(f"acks={acks:<3} {args.records} records one at a time: {figures}")
    finally:
        stop_cluster(proc)


if __name__ == "__main__":
    main()
