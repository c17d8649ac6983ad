"""``/controller`` (JSON, ephemeral) and ``/controller_epoch`` (bare decimal text, the fencing token)."""

from __future__ import annotations

from zkcontroller.zk import paths
from zkcontroller.zk.errors import ZnodeDecodeError, require_data
from zkcontroller.zk.json_fields import INT32_MAX, INT32_MIN, dumps, parse_int_text, parse_object


class ControllerZNode:
    """``{"version":1,"brokerid":3,"timestamp":"1662110000000"}``; the timestamp is a string."""

    VERSION = 1

    @staticmethod
    def path() -> str:
        return paths.CONTROLLER

    @staticmethod
    def encode(broker_id: int, timestamp_ms: int) -> bytes:
        return dumps({"version": ControllerZNode.VERSION, "brokerid": broker_id,
                      "timestamp": str(timestamp_ms)})

    @staticmethod
    def decode(data: bytes | None, path: str = paths.CONTROLLER) -> int:
        """The controller's broker id, the only field Kafka 2.8 reads: a ZK-migration KRaft controller (Kafka
        3.4+) writes version 2 with a ``kraftControllerEpoch``, and a 2.8 broker still reads its id."""
        return parse_object(data, path).get_int("brokerid")


class ControllerEpochZNode:
    """The controller epoch as plain UTF-8 decimal text (``5``), not JSON."""

    @staticmethod
    def path() -> str:
        return paths.CONTROLLER_EPOCH

    @staticmethod
    def encode(epoch: int) -> bytes:
        return str(epoch).encode("ascii")

    @staticmethod
    def next_epoch(epoch: int) -> int:
        """The epoch a new controller takes after ``epoch``, a 32-bit increment as Kafka's: after Int.MaxValue it is
        Int.MinValue, written ``-2147483648`` (still readable, by us and by Kafka's ``toInt``). The controller takes
        office with it, and every broker (whose last seen epoch is at least 0) refuses its requests as stale."""
        # Kafka 2.8 KafkaZkClient.registerControllerAndIncrementControllerEpoch: Int `curEpoch + 1` wraps to MinValue.
        return INT32_MIN if epoch == INT32_MAX else epoch + 1

    @staticmethod
    def decode(data: bytes | None, path: str = paths.CONTROLLER_EPOCH) -> int:
        """Kafka's ``new String(bytes, UTF_8).toInt``, which throws on null data (`NullZnodeDataError`)."""
        try:
            text = require_data(data, path).decode("utf-8")
        except UnicodeDecodeError:
            raise ZnodeDecodeError(path, "controller epoch is not UTF-8 text") from None
        return parse_int_text(text, path, "controller epoch")
