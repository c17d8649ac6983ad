"""Every property name Kafka 2.8.2's ``KafkaConfig.configDef`` defines (``KafkaConfig.configNames``, internal ones
included): a dynamic broker config naming one of them that ``DynamicBrokerConfig.AllDynamicConfigs`` lacks is
refused ("Cannot update these configs dynamically"), as ``DynamicConfig.Broker.nonDynamicProps`` is this set less
the dynamic ones. Their types are `broker.kafka_config_types`'; the defaults known here `broker.config_helper`'s."""

from __future__ import annotations

from zkcontroller.broker.kafka_config_types import KAFKA_CONFIG_TYPES

KAFKA_CONFIG_NAMES = frozenset(KAFKA_CONFIG_TYPES)
