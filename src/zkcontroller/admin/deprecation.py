"""The notices Kafka 2.8.2's ZooKeeper-path tools print on stdout before they act, word for word.

``kafka-configs`` (``ConfigCommand.main``, for every entity type, once its arguments are checked) and
``kafka-preferred-replica-election`` (whose ZooKeeper path ``leader-election`` takes) print
`ZOOKEEPER_DEPRECATED`; ``kafka-reassign-partitions`` prints `REASSIGN_ZOOKEEPER_DEPRECATED` (its own wording,
with a comma) and, for ``--verify``, `REASSIGN_VERIFY_INCOMPLETE` too. ``kafka-topics`` prints none: its
``--zookeeper`` is marked deprecated only in its help.
"""

from __future__ import annotations

ZOOKEEPER_DEPRECATED = ("Warning: --zookeeper is deprecated and will be removed in a future version of Kafka.\n"
                        "Use --bootstrap-server instead to specify a broker to connect to.")
REASSIGN_ZOOKEEPER_DEPRECATED = "Warning: --zookeeper is deprecated, and will be removed in a future version of Kafka."
REASSIGN_VERIFY_INCOMPLETE = ("Warning: because you are using the deprecated --zookeeper option, the results may be "
                              "incomplete.  Use --bootstrap-server instead for more accurate results.")
