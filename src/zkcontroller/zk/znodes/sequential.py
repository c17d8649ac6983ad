"""One base for Kafka's sequential notification znodes (``<parent>/<prefix><10-digit sequence>``): ISR
changes, log-dir events and config changes differ only in where they live and what they carry."""

from __future__ import annotations

from typing import ClassVar, Generic, TypeVar

from zkcontroller.zk import paths

T = TypeVar("T")


class SequentialNotificationZNode(Generic[T]):
    PARENT: ClassVar[str]
    PREFIX: ClassVar[str]

    @classmethod
    def path(cls, sequence_number: str = "") -> str:
        """One notification's path; with no number, the prefix a sequential node is created at."""
        return f"{cls.PARENT}/{cls.PREFIX}{sequence_number}"

    @classmethod
    def sequence_number(cls, name_or_path: str) -> str:
        return paths.sequence_number(name_or_path, cls.PREFIX)

    @staticmethod
    def encode(payload: T) -> bytes:
        raise NotImplementedError

    @staticmethod
    def decode(data: bytes | None, path: str) -> T:
        raise NotImplementedError
