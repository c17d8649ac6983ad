"""The broker's cache of ``/feature`` (Kafka 2.8's ``FinalizedFeatureCache``, kept by its
``FinalizedFeatureChangeListener``), which ApiVersions v3+ answers from.

``/feature`` is read when the first ApiVersions v3 needs it (`ensure_started`), then kept with a watch (an
exists watch while the node is absent, so its creation is seen) and read again on each change and after a new
ZooKeeper session. An Enabled node gives the finalized features and, as their epoch, the node's ZooKeeper version;
an absent or Disabled node empties the cache (ApiVersions then sends epoch -1 and no
finalized features, as Kafka's). This broker supports no feature (Kafka 2.8's ``BrokerFeatures`` default is empty
too). Where we differ: Kafka's broker exits when the finalized features are incompatible with the supported ones
(any at all, in 2.8); here that is logged and the cache is updated all the same. A node that cannot be decoded is
logged and the cache left as it was.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from zkcontroller.broker.coalesced_reads import CoalescedReads
from zkcontroller.coordination.errors import ZkError
from zkcontroller.model import FeatureZNodeData, FeatureZNodeStatus, FinalizedVersionRange
from zkcontroller.runtime.runtime import Runtime
from zkcontroller.zk import paths
from zkcontroller.zk.errors import ZnodeDecodeError
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

log = logging.getLogger("kafka.server.FinalizedFeatureCache")

UNKNOWN_FINALIZED_FEATURES_EPOCH = -1
"""``ApiVersionsResponse.UNKNOWN_FINALIZED_FEATURES_EPOCH``: what an empty cache answers."""

SUPPORTED_FEATURES: tuple[tuple[str, int, int], ...] = ()
"""(name, min version, max version) this broker supports: none, as Kafka 2.8's default ``BrokerFeatures``."""


class FinalizedFeatureCache:
    """``/feature``'s finalized features and epoch as this broker last read them (empty: epoch -1)."""

    def __init__(self, broker_id: int, zk: Callable[[], KafkaZkClient | None], runtime: Runtime) -> None:
        self.broker_id = broker_id
        self._zk = zk
        self.runtime = runtime
        self.epoch = UNKNOWN_FINALIZED_FEATURES_EPOCH
        self.features: tuple[tuple[str, FinalizedVersionRange], ...] = ()
        self._started = False
        self._reads = CoalescedReads(runtime, f"feature-cache-{broker_id}", self._read)

    def startup(self) -> None:
        """Kafka's ``FinalizedFeatureChangeListener.initOrThrow``: the first read, with the watch."""
        self._started = True
        self._reads.start()

    async def ensure_started(self) -> None:
        """`startup` unless done, then wait for the read under way: the first ApiVersions v3 is answered from
        ``/feature`` as it is (Kafka's broker reads it at startup, before it serves requests)."""
        if not self._started:
            self.startup()
        await self.wait_read()

    def shutdown(self) -> None:
        self._reads.stop()

    def on_session_reconnected(self) -> None:
        """A new session has no watches: read again and re-arm."""
        self._reads.schedule()

    async def wait_read(self) -> None:
        """Until the read under way (if any) is done (for tests and the broker's startup)."""
        await self._reads.wait()

    async def _read(self) -> bool:
        """One read of ``/feature`` with its watch (`CoalescedReads`); False once the broker has no store."""
        zk = self._zk()
        if zk is None:
            return False
        watch = self._reads.on_watch
        try:
            found = await zk.get_feature(watch)
            if found is None and await zk.session.exists(paths.FEATURE, watch) is not None:
                self._reads.again()  # created between the two reads: read it
                return True
        except ZnodeDecodeError as e:
            log.error("Cannot read %s, the finalized features are left as they were: %s", paths.FEATURE, e)
            return True
        except ZkError as e:
            log.error("Cannot read %s: %s", paths.FEATURE, e)
            return True
        self._update(found)
        return True

    def _update(self, found: tuple[FeatureZNodeData, int] | None) -> None:
        """``FinalizedFeatureCache.updateOrThrow`` / ``clear`` for what ``/feature`` holds now."""
        if found is None:
            log.info("Feature ZK node at path: %s does not exist", paths.FEATURE)
            self.epoch, self.features = UNKNOWN_FINALIZED_FEATURES_EPOCH, ()
            return
        node, version = found
        if node.status is not FeatureZNodeStatus.ENABLED:
            log.info("Feature ZK node at path: %s is disabled, the finalized features are cleared", paths.FEATURE)
            self.epoch, self.features = UNKNOWN_FINALIZED_FEATURES_EPOCH, ()
            return
        features = node.features
        supported = {name for name, _, _ in SUPPORTED_FEATURES}
        unsupported = [name for name, _ in features if name not in supported]
        if unsupported:
            log.error("Finalized features %s at %s are not supported by broker %d (Kafka's broker would exit)",
                      unsupported, paths.FEATURE, self.broker_id)
        self.epoch, self.features = version, features
        log.info("Updated cache from existing finalized features %s with epoch %d", dict(features), version)
