"""The only place that touches threads, sockets, processes and wall time."""
