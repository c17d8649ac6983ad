"""Kafka's ZooKeeper data model: znode paths, JSON codecs, and `KafkaZkClient` with fenced writes."""
