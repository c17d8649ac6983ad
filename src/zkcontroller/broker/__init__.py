"""Brokers: registration, metadata cache, control-request handling with epoch fencing."""
