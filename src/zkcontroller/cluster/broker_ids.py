"""The broker ids a run here accepts, shared by the ``--broker-ids`` option and the prompt's ``start ID``."""

from __future__ import annotations

MAX_BROKER_ID = 1000
"""Kafka's ``reserved.broker.max.id`` default: with ``broker.id.generation.enable`` (default true) a broker
refuses a ``broker.id`` above it. A larger id started here and registered a port past 65535 (9092 + ID), which the
controller skipped as unreadable, leaving a broker that was running but never in the cluster."""
