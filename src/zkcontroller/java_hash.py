"""Java's hash codes, where Kafka's output follows a ``HashMap``'s iteration order: the admin tools' config lines
(`admin.java_hash_map`, `admin.java_properties`) and a failed Produce request's answer (`broker.produce`)."""

from __future__ import annotations


def java_string_hash(text: str) -> int:
    """``String.hashCode`` as an unsigned 32-bit value: ``31*h + c`` over the UTF-16 code units."""
    units = text.encode("utf-16-be", "surrogatepass")
    h = 0
    for i in range(0, len(units), 2):
        h = (31 * h + (units[i] << 8 | units[i + 1])) & 0xFFFFFFFF
    return h


def hash_map_spread(h: int) -> int:
    """``HashMap.hash``: the high half of the unsigned 32-bit ``h`` folded into the low, for the table index."""
    return h ^ (h >> 16)
