"""Kafka protocol: control-plane request values now; wire framing and Metadata/ApiVersions later."""
