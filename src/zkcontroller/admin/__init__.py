"""Admin operations as Kafka's tools perform them: topic creation, describe, listing."""
