"""ZooKeeper-semantics coordination: one async API (`api`), an embedded backend and a kazoo backend."""
