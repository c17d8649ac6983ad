"""``zkcontroller brokers list`` and ``controller show`` with ``--bootstrap-server``: what Kafka 2.8.2's
``describeCluster`` (DescribeCluster v0, or Metadata from a broker without it) tells a client.

A broker answers from its metadata cache, so these show the brokers and the controller as that broker last heard
from the controller, and only the endpoint of the listener the request came in on. What a broker's answer cannot
carry needs ``--zookeeper``: a broker's epoch (its registration's czxid) and its other listeners, and the
controller epoch with its znode version.
"""

from __future__ import annotations

from zkcontroller.admin.admin_client import AdminClient


async def broker_lines(admin: AdminClient) -> list[str]:
    """One ``Broker: 1\\tRack: r1\\tEndpoint: host:port`` line per live broker, by id (``brokers list``'s layout
    without the ``Epoch`` field, which needs ZooKeeper)."""
    cluster = await admin.describe_cluster()
    return [f"Broker: {b.id}\tRack: {'none' if b.rack is None else b.rack}\tEndpoint: {b.host}:{b.port}"
            for b in sorted(cluster.brokers, key=lambda b: b.id)]


async def controller_line(admin: AdminClient) -> str:
    """``ActiveController: 2\\tClusterId: <id>`` (``none`` when the broker knows no controller); the controller
    epoch and its znode version need ZooKeeper."""
    cluster = await admin.describe_cluster()
    who = "none" if cluster.controller_id < 0 else str(cluster.controller_id)
    return f"ActiveController: {who}\tClusterId: {cluster.cluster_id or 'none'}"
