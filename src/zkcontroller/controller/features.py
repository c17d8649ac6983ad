"""Feature versioning at failover (spec §2.5 step 1, Kafka's ``maybeSetupFeatureVersioning``).

With ``inter.broker.protocol.version`` >= 2.7-IV0 the controller makes sure ``/feature`` exists and is Enabled
(created with the broker's default finalized features, none in 2.8; a Disabled node is enabled with no
features); with an older IBP it makes sure the node says Disabled with no features. ``/feature`` writes are not
fenced (Kafka's neither).

Where we differ: Kafka then waits for the broker's own feature cache to reach the new node version; brokers
here keep a feature cache (`broker/feature_cache.py`), read when their first ApiVersions v3 arrives and watched
after that, and the controller does not wait for it to catch up. A malformed ``/feature`` is reported with its
path and left alone rather than failing the whole failover (Kafka's failover would fail and retry).
"""

from __future__ import annotations

from zkcontroller.controller.families import EventFamily
from zkcontroller.model import FeatureZNodeData, FeatureZNodeStatus
from zkcontroller.protocol.ibp import FEATURE_VERSIONING_MIN_IBP, ibp_at_least
from zkcontroller.zk import paths
from zkcontroller.zk.errors import ZnodeDecodeError


def render(node: FeatureZNodeData) -> str:
    ranges = ", ".join(f"({name} -> [min_version_level: {r.min_version_level}, max_version_level: "
                       f"{r.max_version_level}])" for name, r in node.features)
    return f"FeatureZNode(status={node.status.name.title()}, features=Features{{{ranges}}})"


class FeatureVersioning(EventFamily):
    async def register_watches(self) -> None:
        """Runs first of all failover steps (the families list puts this family first)."""
        enabled = ibp_at_least(self.core.config.inter_broker_protocol_version, FEATURE_VERSIONING_MIN_IBP)
        try:
            found = await self.core.zk.get_feature()
        except ZnodeDecodeError as e:
            self.core.log.error(f"Leaving {paths.FEATURE} as it is, it cannot be read: {e}")
            return
        existing = None if found is None else found[0]
        if existing is not None and existing.status is FeatureZNodeStatus.DISABLED and existing.features:
            self.core.log.warn(f"FeatureZNode at path: {paths.FEATURE} with disabled status contains non-empty "
                               f"features: {render(existing)}")
        if enabled:
            keep = existing.features if existing is not None and existing.status is FeatureZNodeStatus.ENABLED else ()
            target = FeatureZNodeData(FeatureZNodeStatus.ENABLED, keep)
        else:
            target = FeatureZNodeData(FeatureZNodeStatus.DISABLED, ())
        if existing is None:
            self.core.log.info(f"Creating FeatureZNode at path: {paths.FEATURE} with contents: {render(target)}")
            await self.core.zk.create_feature(target)
        elif existing != target:
            self.core.log.info(f"Updating FeatureZNode at path: {paths.FEATURE} with contents: {render(target)}")
            await self.core.zk.update_feature(target)
