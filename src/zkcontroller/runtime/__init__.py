"""The low layer that touches the outside world: the `Runtime` port (clock, sleeping, tasks, randomness)
and the in-process transport."""
