"""``/latest_producer_id_block``: the last block of producer ids a broker claimed (Kafka's
``ProducerIdBlockZNode``, written and read by ``ProducerIdManager``)."""

from __future__ import annotations

from dataclasses import dataclass

from zkcontroller.zk import paths
from zkcontroller.zk.errors import ZnodeDecodeError
from zkcontroller.zk.json_fields import clip_text, decimal_fits, dumps, parse_object, significant_int

_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1


@dataclass(frozen=True, slots=True)
class ProducerIdBlock:
    """Kafka's ``ProducerIdBlock``: ids ``block_start`` to ``block_end``, both inclusive, claimed by ``broker_id``."""

    broker_id: int
    block_start: int
    block_end: int


class ProducerIdBlockZNode:
    """``{"version":1,"broker":0,"block_start":"0","block_end":"999"}``: the ids are strings (Java longs)."""

    VERSION = 1

    @staticmethod
    def path() -> str:
        return paths.LATEST_PRODUCER_ID_BLOCK

    @staticmethod
    def encode(block: ProducerIdBlock) -> bytes:
        return dumps({"version": ProducerIdBlockZNode.VERSION, "broker": block.broker_id,
                      "block_start": str(block.block_start), "block_end": str(block.block_end)})

    @staticmethod
    def decode(data: bytes | None, path: str = paths.LATEST_PRODUCER_ID_BLOCK) -> ProducerIdBlock:
        """Kafka's ``parseProducerIdBlockData``: reads no version; the ids must parse as Java longs."""
        obj = parse_object(data, path)
        return ProducerIdBlock(obj.get_int("broker"), _parse_long(obj.get_str("block_start"), path, "block_start"),
                               _parse_long(obj.get_str("block_end"), path, "block_end"))


def _parse_long(text: str, path: str, where: str) -> int:
    """Java's ``Long.parseLong``: optional sign, ASCII digits, 64-bit range."""
    body = text[1:] if text[:1] in ("+", "-") else text
    if not body or not body.isascii() or not body.isdigit() or not decimal_fits(body, 19):
        raise ZnodeDecodeError(path, f"{where}: {clip_text(text)} is not a 64-bit decimal integer")
    value = significant_int(text[: len(text) - len(body)], body)
    if not _LONG_MIN <= value <= _LONG_MAX:
        raise ZnodeDecodeError(path, f"{where}: {clip_text(text)} is not a 64-bit decimal integer")
    return value
