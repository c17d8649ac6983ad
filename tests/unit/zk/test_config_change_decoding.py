"""`decode_notification` (Kafka 2.8.2's ``processNotification`` up to its handler): total on any bytes, and where
it names an entity, the one our znode decoder reads."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from zkcontroller.zk.config_changes import decode_notification
from zkcontroller.zk.errors import ZnodeDecodeError
from zkcontroller.zk.java_text import JavaException
from zkcontroller.zk.znodes import ConfigEntityChangeNotificationSequenceZNode as ZNode

_leaf = st.one_of(st.none(), st.booleans(), st.integers(-3, 2**32), st.floats(allow_nan=False), st.text(max_size=6),
                  st.sampled_from(["topics/t", "ips/1.2.3.4", "topics", "clients", "x/y", "brokers/<default>"]))
_values = st.recursive(_leaf, lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=3), inner,
                                                                                          max_size=2), max_leaves=4)
_notifications = st.fixed_dictionaries({}, optional={
    "version": st.one_of(st.sampled_from([1, 2, 3]), _leaf), "entity_path": _values, "entity_type": _values,
    "entity_name": _values})


@given(data=st.binary(max_size=40) | _notifications.map(lambda d: json.dumps(d).encode()))
@settings(max_examples=300, deadline=None)
def test_every_notification_decodes_to_an_entity_a_kafka_failure_or_not_json(data: bytes) -> None:
    decoded = decode_notification("0000000001", data)
    outcomes = [decoded.entity != "", decoded.failure is not None, decoded.not_json is not None]
    assert outcomes.count(True) == 1
    assert decoded.failure is None or isinstance(decoded.failure, JavaException)
    if decoded.entity:
        try:
            assert ZNode.decode(data, decoded.path) == decoded.entity
        except ZnodeDecodeError as e:  # our znode decoder is stricter only where Kafka is too
            raise AssertionError(f"Kafka reads {decoded.entity}, ours refuses: {e}") from e
