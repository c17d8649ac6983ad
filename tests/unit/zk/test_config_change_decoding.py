"""`decode_notification` (Kafka 2.8.2's ``processNotification`` up to its handler): total on any bytes (integers
past Python's ``str`` limit and JSON nested past its recursion limit included), and where it names an entity, the
one our znode decoder reads."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zkcontroller.zk.config_changes import NotificationDecodeError, decode_notification
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


_huge_int = st.builds(lambda sign, n: sign + "9" * n, st.sampled_from(["", "-"]), st.integers(4250, 6000))
_deep = st.builds(lambda d, leaf: "[" * d + leaf + "]" * d, st.integers(1, 1500), st.sampled_from(["", "1", '"x"']))
_deep_object = st.builds(lambda d: '{"a":' * d + "1" + "}" * d, st.integers(1, 1500))
_fragment = st.one_of(_huge_int, _deep, _deep_object, st.sampled_from(['"topics/t"', "2", "1", '"topics"']))
_poison = st.builds(lambda fields: ("{" + ",".join(f'"{k}":{v}' for k, v in fields.items()) + "}").encode(),
                    st.fixed_dictionaries({}, optional={"version": _fragment, "entity_path": _fragment,
                                                        "entity_type": _fragment, "entity_name": _fragment}))
"""JSON text that Python cannot write back as it reads it: integers past ``str(int)``'s 4300 digits, nesting
past its recursion limit."""


@given(data=st.binary(max_size=40) | _notifications.map(lambda d: json.dumps(d).encode()) | _poison)
@settings(max_examples=300, deadline=None)
def test_every_notification_decodes_to_an_entity_a_kafka_failure_or_not_json(data: bytes) -> None:
    decoded = decode_notification("0000000001", data)
    outcomes = [decoded.entity != "", decoded.failure is not None, decoded.not_json is not None]
    assert outcomes.count(True) == 1
    assert decoded.failure is None or isinstance(decoded.failure, JavaException)
    assert not isinstance(decoded.failure, NotificationDecodeError), decoded.failure  # Kafka's failure, not ours
    if decoded.entity:
        try:
            assert ZNode.decode(data, decoded.path) == decoded.entity
        except ZnodeDecodeError as e:  # our znode decoder is stricter only where Kafka is too
            raise AssertionError(f"Kafka reads {decoded.entity}, ours refuses: {e}") from e


POISON = {
    "huge_int_version": (b'{"version":' + b"9" * 5000 + b"}", "Expected `Int` value, received " + "9" * 5000),
    "huge_int_entity_path": (b'{"version":2,"entity_path":-' + b"9" * 5000 + b"}",
                             "Expected `String` value, received -" + "9" * 5000),
    "deep_array_version": (b'{"version":' + b"[" * 600 + b"]" * 600 + b"}",
                           "Expected `Int` value, received " + "[" * 600 + "]" * 600),
    "deep_object_entity_type": (b'{"version":1,"entity_type":' + b'{"a":' * 500 + b"1" + b"}" * 500 + b"}",
                                "Expected `String` value, received " + '{"a":' * 500 + "1" + "}" * 500),
}


@pytest.mark.parametrize("name", list(POISON))
def test_what_python_cannot_print_or_recurse_into_fails_as_in_kafka(name: str) -> None:
    """They raised ValueError (``str`` of a 5000-digit int) or RecursionError (``jackson_text``) out of
    ``decode_notification``, and so out of every reader's pass."""
    data, message = POISON[name]
    failure = decode_notification("0000000001", data).failure
    assert type(failure).__name__ == "JsonMappingException" and str(failure) == message


def test_nesting_past_python_s_recursion_limit_is_a_failure_of_ours_naming_the_depth() -> None:
    """Jackson would read it (and fail on the version); Python's parser cannot: it is JSON all the same, so not
    skipped as data that is no JSON but failed, naming the node and the depth."""
    decoded = decode_notification("0000000001", b'{"version":' + b"[" * 5000 + b"]" * 5000 + b"}")
    assert decoded.not_json is None and decoded.failure is not None
    assert "config_change_0000000001: JSON nested 5001 levels deep" in str(decoded.failure)


def test_an_unexpected_error_is_a_failure_of_ours(monkeypatch: pytest.MonkeyPatch) -> None:
    import zkcontroller.zk.config_changes as module

    def broken(*_args: object) -> object:
        raise KeyError("bug")

    monkeypatch.setattr(module, "_decode_object", broken)
    failure = decode_notification("0000000001", b'{"version":2,"entity_path":"topics/t"}').failure
    assert isinstance(failure, NotificationDecodeError) and isinstance(failure.__cause__, KeyError)
    assert str(failure) == "Cannot decode the config change notification: KeyError: 'bug'"
