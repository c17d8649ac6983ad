"""zkcontroller: Apache Kafka's ZooKeeper-mode cluster controller, reimplemented in Python."""

__version__ = "0.1.0"
