"""The admin-client APIs a broker answers (Kafka 2.8's ``KafkaApis`` handlers with ``ZkAdminManager``): CreateTopics,
CreatePartitions, DeleteTopics, Describe/Alter/IncrementalAlterConfigs, ElectLeaders, the partition reassignment APIs
and the client quota APIs.

They are broker code, but they live here rather than in `zkcontroller.broker` because they reuse the admin tools'
rules and ZooKeeper writes (`zkcontroller.admin`, layer 6), which the broker layer (5) may not import. `KafkaApis`
(`broker.kafka_apis`) takes them as injected handlers; `cluster.listener` wires them in.
"""
