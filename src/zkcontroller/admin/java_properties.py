"""`properties_order` now lives in `zkcontroller.zk.java_properties` (the brokers print Properties too)."""

from zkcontroller.zk.java_properties import properties_order

__all__ = ["properties_order"]
