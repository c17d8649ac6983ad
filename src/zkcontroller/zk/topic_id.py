"""Reading a topic id out of a znode: `TopicId.from_string`, with failures naming the znode."""

from __future__ import annotations

from zkcontroller.model import TopicId
from zkcontroller.zk.errors import ZnodeDecodeError


def parse_topic_id(text: str, path: str) -> TopicId:
    try:
        return TopicId.from_string(text)
    except ValueError as e:
        raise ZnodeDecodeError(path, f"topic_id: {e}") from None
