"""Assemblies for real runs: the in-process cluster, its prompt, the demo, log files, the ZooKeeper launcher."""
