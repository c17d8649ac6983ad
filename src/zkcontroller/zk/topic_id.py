"""Kafka's topic id (``org.apache.kafka.common.Uuid``): 16 bytes shown as URL-safe Base64 without padding."""

from __future__ import annotations

import base64
import binascii
import random
from dataclasses import dataclass

from zkcontroller.zk.errors import ZnodeDecodeError

_UUID_BYTES = 16
_B64_LEN = 22


@dataclass(frozen=True, slots=True, order=True)
class TopicId:
    """A topic id; ``str()`` gives the 22-character form stored in ``/brokers/topics/<t>``."""

    raw: bytes

    def __post_init__(self) -> None:
        if len(self.raw) != _UUID_BYTES:
            raise ValueError(f"a topic id has {_UUID_BYTES} bytes, got {len(self.raw)}")

    def __str__(self) -> str:
        return base64.urlsafe_b64encode(self.raw).decode("ascii").rstrip("=")

    def __repr__(self) -> str:
        return f"TopicId({self})"

    @classmethod
    def from_string(cls, text: str) -> TopicId:
        """Parse the Base64 form (Kafka's ``Uuid.fromString``); raises ValueError on anything else."""
        if len(text) != _B64_LEN or not text.isascii():
            raise ValueError(f"{text!r} is not a 22-character URL-safe Base64 topic id")
        try:
            raw = base64.b64decode(text + "==", altchars=b"-_", validate=True)
        except binascii.Error as e:
            raise ValueError(f"{text!r} is not URL-safe Base64: {e}") from None
        if str(cls(raw)) != text:  # non-canonical trailing bits
            raise ValueError(f"{text!r} is not a canonical topic id")
        return cls(raw)

    @classmethod
    def parse(cls, text: str, path: str) -> TopicId:
        """`from_string` for a znode field: failures name the znode."""
        try:
            return cls.from_string(text)
        except ValueError as e:
            raise ZnodeDecodeError(path, f"topic_id: {e}") from None

    @classmethod
    def generate(cls, rng: random.Random) -> TopicId:
        """A random version-4 UUID from the injected source, as ``Uuid.randomUuid`` makes.

        Like later Kafka versions, never returns the all-zero id or one whose text starts with ``-``
        (which command-line tools would mistake for an option).
        """
        while True:
            value = bytearray(rng.getrandbits(128).to_bytes(_UUID_BYTES, "big"))
            value[6] = (value[6] & 0x0F) | 0x40  # version 4
            value[8] = (value[8] & 0x3F) | 0x80  # IETF variant
            candidate = cls(bytes(value))
            if candidate != ZERO_TOPIC_ID and not str(candidate).startswith("-"):
                return candidate


ZERO_TOPIC_ID = TopicId(bytes(_UUID_BYTES))
