"""`TopicZNode.decode` checks a well-formed assignment map by map; whatever it is given, it must decide exactly
as the field-by-field checks do (same assignment, or the same error naming the same field)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zkcontroller.zk.errors import ZnodeDecodeError
from zkcontroller.zk.znodes import topics
from zkcontroller.zk.znodes.topics import TopicZNode

PATH = "/brokers/topics/orders"

_KEYS = st.one_of(
    st.integers(0, 2**31 + 10).map(str),
    st.sampled_from(["+1", "-1", "007", "\u0663", "1_0", "", " 1", "2147483648", "999999999", "1000000000"]),
)
_REPLICA = st.one_of(st.integers(-(2**31) - 3, 2**31 + 3), st.booleans(), st.just(1.0), st.just("1"), st.none())
_REPLICAS = st.one_of(st.lists(st.integers(0, 5), max_size=4), st.lists(_REPLICA, max_size=4), st.just(3),
                      st.none(), st.just({}))
_MAP = st.dictionaries(_KEYS, _REPLICAS, max_size=5)


def _outcome(data: bytes) -> Any:
    try:
        return TopicZNode.decode(data, PATH)
    except ZnodeDecodeError as e:
        return ("error", str(e))


@settings(max_examples=300)
@given(partitions=_MAP, adding=st.one_of(st.none(), _MAP), removing=st.one_of(st.none(), _MAP))
def test_map_by_map_check_decides_as_field_by_field(partitions: dict[str, Any], adding: dict[str, Any] | None,
                                                    removing: dict[str, Any] | None) -> None:
    doc: dict[str, Any] = {"version": 3, "partitions": partitions}
    if adding is not None:
        doc["adding_replicas"] = adding
    if removing is not None:
        doc["removing_replicas"] = removing
    data = json.dumps(doc).encode()
    fast = _outcome(data)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(topics, "_well_formed", lambda *_args: None)  # every document through the per-field checks
        checked = _outcome(data)
    assert fast == checked
