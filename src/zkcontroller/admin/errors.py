"""Errors of the admin operations, one class per Kafka exception a user can meet.

The messages are Kafka's own wording where Kafka has one, so they read the same as ``kafka-topics`` output;
the CLI prints ``str(error)`` and exits non-zero, never a traceback.
"""

from __future__ import annotations

from collections.abc import Mapping

from zkcontroller.zk.errors import ZnodeDecodeError


class AdminError(Exception):
    """Base of every admin failure a user should see as a one-line message."""


class InvalidTopicError(AdminError):
    """Illegal topic name, or it collides with an existing topic (``InvalidTopicException``)."""


class TopicExistsError(AdminError):
    """``TopicExistsException``."""


class UnknownTopicError(AdminError):
    """``UnknownTopicOrPartitionException``: the topic named does not exist."""


class TopicAlreadyMarkedForDeletionError(AdminError):
    """``TopicAlreadyMarkedForDeletionException``."""


class InvalidPartitionsError(AdminError):
    """``InvalidPartitionsException``: fewer than one partition, or a partition count that does not grow."""


class InvalidReplicationFactorError(AdminError):
    """``InvalidReplicationFactorException``: below one, or more than there are brokers."""


class InvalidReplicaAssignmentError(AdminError):
    """``InvalidReplicaAssignmentException``: an explicit assignment that is inconsistent or malformed."""


class BrokerNotAvailableError(AdminError):
    """``BrokerNotAvailableException``: an explicit assignment names a broker that is not registered."""


class InvalidConfigError(AdminError):
    """``InvalidConfigurationException`` / ``ConfigException``: an unknown topic config or a bad value."""


class AdminOperationError(AdminError):
    """``AdminOperationException``: e.g. some brokers have a rack and others have none."""


def corrupt_registration_error(malformed: Mapping[str, ZnodeDecodeError]) -> AdminError:
    """The one error of a command that places replicas (``topics create``/``alter --partitions``, ``reassign
    --generate``) when a broker registration cannot be read (``malformed``: by ``/brokers/ids/<id>`` path, not
    empty).

    Kafka's ``getBrokerMetadatas`` reads the registrations in broker id order and throws at the first bad one,
    with ``BrokerIdZNode.decode``'s "Failed to parse ZooKeeper registration for broker N" for data that is not
    JSON (the bare Jackson error for the other kinds); that sentence is used for every kind, with the path and
    what is wrong instead of the raw data."""
    path, error = min(malformed.items(), key=lambda item: int(item[0].rsplit("/", 1)[-1]))
    broker_id = path.rsplit("/", 1)[-1]
    return AdminError(f"Failed to parse ZooKeeper registration for broker {broker_id} ({path}): {error.reason}")
