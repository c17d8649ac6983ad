"""Errors of the admin operations, one class per Kafka exception a user can meet.

The messages are Kafka's own wording where Kafka has one, so they read the same as ``kafka-topics`` output;
the CLI prints ``str(error)`` and exits non-zero, never a traceback.
"""

from __future__ import annotations


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
