"""The type of every property Kafka 2.8.2's ``KafkaConfig.configDef`` defines (``KafkaConfig.configKeys``, internal
ones included), as ``ConfigDef.Type`` names. IncrementalAlterConfigs on a BROKER resource looks an APPEND or
SUBTRACT key up here (``prepareIncrementalConfigs``): only a LIST key may be appended to or subtracted from, and a
key KafkaConfig lacks (a custom config, a ``listener.name.<l>.`` name, ``DynamicConfig.Broker``'s throttle rates)
fails Kafka's map lookup. Taken from KafkaConfig.scala's ``define``/``defineInternal`` calls."""

from __future__ import annotations

from collections.abc import Mapping

_NAMES_BY_TYPE: Mapping[str, tuple[str, ...]] = {
    "BOOLEAN": (
        "auto.create.topics.enable", "auto.leader.rebalance.enable", "broker.id.generation.enable",
        "controlled.shutdown.enable", "delete.topic.enable", "log.cleaner.enable", "log.message.downconversion.enable",
        "log.preallocate", "unclean.leader.election.enable", "zookeeper.set.acl", "zookeeper.ssl.client.enable",
        "zookeeper.ssl.crl.enable", "zookeeper.ssl.ocsp.enable"
    ),
    "STRING": (
        "advertised.host.name", "advertised.listeners", "authorizer.class.name", "broker.rack", "compression.type",
        "control.plane.listener.name", "controller.listener.names", "host.name", "inter.broker.listener.name",
        "inter.broker.protocol.version", "listener.security.protocol.map", "listeners", "log.dir", "log.dirs",
        "log.message.format.version", "log.message.timestamp.type", "max.connections.per.ip.overrides",
        "metadata.log.dir", "metrics.recording.level", "password.encoder.cipher.algorithm",
        "password.encoder.keyfactory.algorithm", "replica.selector.class", "sasl.kerberos.kinit.cmd",
        "sasl.kerberos.service.name", "sasl.mechanism.controller.protocol", "sasl.mechanism.inter.broker.protocol",
        "security.inter.broker.protocol", "security.providers", "ssl.client.auth",
        "ssl.endpoint.identification.algorithm", "ssl.keymanager.algorithm", "ssl.keystore.location",
        "ssl.keystore.type", "ssl.principal.mapping.rules", "ssl.protocol", "ssl.provider",
        "ssl.secure.random.implementation", "ssl.trustmanager.algorithm", "ssl.truststore.location",
        "ssl.truststore.type", "zookeeper.clientCnxnSocket", "zookeeper.connect",
        "zookeeper.ssl.endpoint.identification.algorithm", "zookeeper.ssl.keystore.location",
        "zookeeper.ssl.keystore.type", "zookeeper.ssl.protocol", "zookeeper.ssl.truststore.location",
        "zookeeper.ssl.truststore.type"
    ),
    "INT": (
        "advertised.port", "alter.log.dirs.replication.quota.window.num",
        "alter.log.dirs.replication.quota.window.size.seconds", "background.threads", "broker.heartbeat.interval.ms",
        "broker.id", "broker.session.timeout.ms", "connection.failed.authentication.delay.ms",
        "controlled.shutdown.max.retries", "controller.quorum.append.linger.ms",
        "controller.quorum.election.backoff.max.ms", "controller.quorum.election.timeout.ms",
        "controller.quorum.fetch.timeout.ms", "controller.quorum.request.timeout.ms",
        "controller.quorum.retry.backoff.ms", "controller.quota.window.num", "controller.quota.window.size.seconds",
        "controller.socket.timeout.ms", "default.replication.factor",
        "delete.records.purgatory.purge.interval.requests", "fetch.max.bytes",
        "fetch.purgatory.purge.interval.requests", "group.initial.rebalance.delay.ms", "group.max.session.timeout.ms",
        "group.max.size", "group.min.session.timeout.ms", "initial.broker.registration.timeout.ms",
        "kafka.metrics.polling.interval.secs", "leader.imbalance.per.broker.percentage", "log.cleaner.io.buffer.size",
        "log.cleaner.threads", "log.flush.offset.checkpoint.interval.ms",
        "log.flush.start.offset.checkpoint.interval.ms", "log.index.interval.bytes", "log.index.size.max.bytes",
        "log.retention.hours", "log.retention.minutes", "log.roll.hours", "log.roll.jitter.hours", "log.segment.bytes",
        "max.connection.creation.rate", "max.connections", "max.connections.per.ip",
        "max.incremental.fetch.session.cache.slots", "message.max.bytes", "metrics.num.samples", "min.insync.replicas",
        "node.id", "num.io.threads", "num.network.threads", "num.partitions", "num.recovery.threads.per.data.dir",
        "num.replica.alter.log.dirs.threads", "num.replica.fetchers", "offset.metadata.max.bytes",
        "offsets.commit.timeout.ms", "offsets.load.buffer.size", "offsets.retention.minutes",
        "offsets.topic.compression.codec", "offsets.topic.num.partitions", "offsets.topic.segment.bytes",
        "password.encoder.iterations", "password.encoder.key.length", "port",
        "producer.purgatory.purge.interval.requests", "queued.max.requests", "quota.window.num",
        "quota.window.size.seconds", "replica.fetch.backoff.ms", "replica.fetch.max.bytes", "replica.fetch.min.bytes",
        "replica.fetch.response.max.bytes", "replica.fetch.wait.max.ms", "replica.socket.receive.buffer.bytes",
        "replica.socket.timeout.ms", "replication.quota.window.num", "replication.quota.window.size.seconds",
        "request.timeout.ms", "reserved.broker.max.id", "sasl.server.max.receive.size", "socket.receive.buffer.bytes",
        "socket.request.max.bytes", "socket.send.buffer.bytes",
        "transaction.abort.timed.out.transaction.cleanup.interval.ms", "transaction.max.timeout.ms",
        "transaction.remove.expired.transaction.cleanup.interval.ms", "transaction.state.log.load.buffer.size",
        "transaction.state.log.min.isr", "transaction.state.log.num.partitions", "transaction.state.log.segment.bytes",
        "transactional.id.expiration.ms", "zookeeper.connection.timeout.ms", "zookeeper.max.in.flight.requests",
        "zookeeper.session.timeout.ms", "zookeeper.sync.time.ms"
    ),
    "SHORT": (
        "offsets.commit.required.acks", "offsets.topic.replication.factor", "sasl.login.refresh.buffer.seconds",
        "sasl.login.refresh.min.period.seconds", "transaction.state.log.replication.factor"
    ),
    "LONG": (
        "connections.max.idle.ms", "connections.max.reauth.ms", "controlled.shutdown.retry.backoff.ms",
        "delegation.token.expiry.check.interval.ms", "delegation.token.expiry.time.ms",
        "delegation.token.max.lifetime.ms", "leader.imbalance.check.interval.seconds", "log.cleaner.backoff.ms",
        "log.cleaner.dedupe.buffer.size", "log.cleaner.delete.retention.ms", "log.cleaner.max.compaction.lag.ms",
        "log.cleaner.min.compaction.lag.ms", "log.flush.interval.messages", "log.flush.interval.ms",
        "log.flush.scheduler.interval.ms", "log.message.timestamp.difference.max.ms", "log.retention.bytes",
        "log.retention.check.interval.ms", "log.retention.ms", "log.roll.jitter.ms", "log.roll.ms",
        "log.segment.delete.delay.ms", "metrics.sample.window.ms", "offsets.retention.check.interval.ms",
        "queued.max.request.bytes", "quota.consumer.default", "quota.producer.default",
        "replica.high.watermark.checkpoint.interval.ms", "replica.lag.time.max.ms",
        "sasl.kerberos.min.time.before.relogin", "socket.connection.setup.timeout.max.ms",
        "socket.connection.setup.timeout.ms"
    ),
    "DOUBLE": (
        "log.cleaner.io.buffer.load.factor", "log.cleaner.io.max.bytes.per.second", "log.cleaner.min.cleanable.ratio",
        "sasl.kerberos.ticket.renew.jitter", "sasl.kerberos.ticket.renew.window.factor",
        "sasl.login.refresh.window.factor", "sasl.login.refresh.window.jitter"
    ),
    "LIST": (
        "controller.quorum.voters", "kafka.metrics.reporters", "log.cleanup.policy", "metric.reporters",
        "process.roles", "sasl.enabled.mechanisms", "sasl.kerberos.principal.to.local.rules", "ssl.cipher.suites",
        "ssl.enabled.protocols", "zookeeper.ssl.cipher.suites", "zookeeper.ssl.enabled.protocols"
    ),
    "CLASS": (
        "alter.config.policy.class.name", "client.quota.callback.class", "create.topic.policy.class.name",
        "principal.builder.class", "sasl.client.callback.handler.class", "sasl.login.callback.handler.class",
        "sasl.login.class", "sasl.server.callback.handler.class", "ssl.engine.factory.class"
    ),
    "PASSWORD": (
        "delegation.token.master.key", "delegation.token.secret.key", "password.encoder.old.secret",
        "password.encoder.secret", "sasl.jaas.config", "ssl.key.password", "ssl.keystore.certificate.chain",
        "ssl.keystore.key", "ssl.keystore.password", "ssl.truststore.certificates", "ssl.truststore.password",
        "zookeeper.ssl.keystore.password", "zookeeper.ssl.truststore.password"
    ),
}

KAFKA_CONFIG_TYPES: Mapping[str, str] = {name: kind for kind, names in _NAMES_BY_TYPE.items() for name in names}
"""Each ``KafkaConfig`` property name with its ``ConfigDef.Type`` (``BOOLEAN`` ... ``PASSWORD``)."""

KAFKA_INTERNAL_CONFIGS = frozenset({
    "process.roles", "node.id", "initial.broker.registration.timeout.ms", "broker.heartbeat.interval.ms",
    "broker.session.timeout.ms", "metadata.log.dir", "controller.listener.names", "sasl.mechanism.controller.protocol",
    "controller.quorum.voters", "controller.quorum.election.timeout.ms", "controller.quorum.fetch.timeout.ms",
    "controller.quorum.election.backoff.max.ms", "controller.quorum.append.linger.ms",
    "controller.quorum.request.timeout.ms", "controller.quorum.retry.backoff.ms",
})
"""The 15 properties KafkaConfig.scala defines with ``defineInternal`` (the KRaft ones, not yet public in 2.8):
``AbstractConfig.nonInternalValues`` leaves them out, so DescribeConfigs lists one only when it is set."""
