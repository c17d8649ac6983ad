"""Controller-side errors (Kafka's ``StateChangeFailedException`` and friends).

``ControllerMovedError`` lives with the fenced ZooKeeper writes that raise it (`zkcontroller.zk.errors`).
"""

from __future__ import annotations


class StateChangeFailedError(Exception):
    """A partition or replica transition that could not be made; recorded per partition, never fatal."""

    java_class = "kafka.common.StateChangeFailedException"
    """What Kafka's state-change log names in its place (`runtime.log_lines.qualified_name`)."""


class IllegalControllerStateError(Exception):
    """Kafka's ``IllegalStateException`` at controller call sites: the controller must resign."""


class StaleBrokerEpochError(Exception):
    """A broker request carried a broker epoch older than the one the controller knows."""


class BrokerNotAvailableError(Exception):
    """A request named a broker the controller does not know as live."""


class UnusableReplicaError(Exception):
    """A reassignment target names a replica that is not a broker id (Kafka's ClassCastException on unboxing a
    ``/admin/reassign_partitions`` replica its Jackson binding kept as a string, float, map, ...)."""
