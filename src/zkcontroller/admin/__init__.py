"""Admin operations as Kafka's tools perform them: topic creation, describe, listing.

`topics.TopicAdmin` writes znodes as ``AdminZkClient`` does; `replica_assignment` is Kafka's placement;
`describe` reads the cluster in ``kafka-topics --describe`` layout; `cli` holds the click commands.
"""
