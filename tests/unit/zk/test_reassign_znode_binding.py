"""``ReassignPartitionsZNode.decode`` as Kafka 2.8.2 binds the znode with Jackson 2.10 (``Json.parseBytesAs`` into
``LegacyPartitionAssignment``/``ReplicaAssignment``), then walks it: which refusals are JSON errors (Kafka's
``getPartitionReassignment`` logs them and reads no reassignment) and which throw (null data, dereferenced nulls)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zkcontroller.java_double import java_double
from zkcontroller.model import TopicPartition
from zkcontroller.zk.errors import NullDereferenceError, NullZnodeDataError, ZnodeDecodeError
from zkcontroller.zk.json_fields import java_integer_text
from zkcontroller.zk.znodes import BoundReassignment, ReassignPartitionsZNode

PATH = "/admin/reassign_partitions"
ENTRY = '{"topic":"t","partition":0,"replicas":[1,2]}'


def _refusal(data: bytes | None) -> ZnodeDecodeError:
    with pytest.raises(ZnodeDecodeError) as caught:
        ReassignPartitionsZNode.decode(data, PATH)
    assert caught.value.path == PATH
    return caught.value


@pytest.mark.parametrize("data", [
    b"", b"  ", b"not json", b"[]", b"7", b'"x"', b"true",  # not an object: Jackson's readValue fails
    b'{"version":1,"partitions":[],"log_dirs":[]}',  # UnrecognizedPropertyException
    b'{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1],"log_dirs":["any"]}]}',
    b'{"version":"one","partitions":[]}', b'{"version":[1],"partitions":[]}',  # not an Int to Jackson
    b'{"version":1,"partitions":7}', b'{"version":1,"partitions":[7]}', b'{"version":1,"partitions":[[]]}',
    b'{"version":1,"partitions":[{"topic":"t","partition":"x","replicas":[1]}]}',
    # Jackson fails the binding before Kafka's walk dereferences anything: a JSON error, null entry or not
    b'{"version":1,"partitions":[null],"extra":1}', b'{"partitions":null,"version":"x"}',
])
def test_what_kafkas_binding_refuses_is_a_json_error_read_as_no_reassignment(data: bytes) -> None:
    error = _refusal(data)
    assert not isinstance(error, NullZnodeDataError | NullDereferenceError)
    assert ReassignPartitionsZNode.kafka_reads_as_empty(error)


@pytest.mark.parametrize("data", [
    b"null", b"{}", b'{"version":1}', b'{"version":1,"partitions":null}', b'{"version":1,"partitions":[null]}',
    f'{{"version":1,"partitions":[{ENTRY},null]}}'.encode(),
    b'{"version":1,"partitions":[{"topic":"t","partition":0}]}',
    b'{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":null}]}',
])
def test_nulls_kafkas_decoder_dereferences_throw(data: bytes) -> None:
    error = _refusal(data)
    assert isinstance(error, NullDereferenceError)
    assert not ReassignPartitionsZNode.kafka_reads_as_empty(error)


def test_null_data_throws() -> None:
    """``ObjectMapper.readValue(null, ...)``: IllegalArgumentException ("argument "src" is null")."""
    error = _refusal(None)
    assert isinstance(error, NullZnodeDataError)
    assert not ReassignPartitionsZNode.kafka_reads_as_empty(error)


@pytest.mark.parametrize(("partition", "expected"), [
    ("", 0), ('"partition":null,', 0), ('"partition":"3",', 3), ('"partition":" 4 ",', 4), ('"partition":1.9,', 1),
    ('"partition":"",', 0), ('"partition":-2,', -2),
])
def test_an_entrys_partition_binds_as_jackson_binds_an_int(partition: str, expected: int) -> None:
    data = f'{{"partitions":[{{"topic":"t",{partition}"replicas":[3]}}]}}'.encode()
    assert ReassignPartitionsZNode.decode(data, PATH) == {TopicPartition("t", expected): (3,)}


def test_a_numeric_string_past_pythons_digit_limit_is_refused_not_a_value_error() -> None:
    """``int()`` refuses 4,300 digits and more (ValueError); Jackson refuses the value as out of range."""
    data = b'{"version":"' + b"9" * 5000 + b'","partitions":[]}'
    error = _refusal(data)
    assert "version" in error.reason and ReassignPartitionsZNode.kafka_reads_as_empty(error)
    zeros = b'{"version":1,"partitions":[{"topic":"t","partition":"' + b"0" * 5000 + b'7","replicas":[1]}]}'
    assert ReassignPartitionsZNode.decode(zeros, PATH) == {TopicPartition("t", 7): (1,)}


# What Jackson 2.10.5.1's default ObjectMapper binds from each shape into Java equivalents of Kafka's case classes
# (a constructor whose parameters carry @JsonProperty, ``replicas`` a ``List<Object>``), run once by hand against
# jackson-databind 2.10.5.1 built from its source (on jackson-core 2.17.2: 2.10's core jar was not at hand): topic
# and replicas as bound (``None`` for a null or absent topic).
BINDS = [
    ('{"topic":5,"partition":0,"replicas":[1]}', "5", 0, (1,)),
    ('{"topic":1.50E+2,"partition":0,"replicas":[1]}', "1.50E+2", 0, (1,)),  # the number as written
    ('{"topic":-0,"partition":0,"replicas":[1]}', "-0", 0, (1,)),
    ('{"topic":true,"partition":0,"replicas":[1]}', "true", 0, (1,)),
    ('{"topic":null,"partition":0,"replicas":[1]}', None, 0, (1,)),
    ('{"partition":0,"replicas":[1]}', None, 0, (1,)),
    ('{"topic":"a","partition":"1","replicas":[1]}', "a", 1, (1,)),
    ('{"topic":"a","partition":1.9,"replicas":[1]}', "a", 1, (1,)),
    ('{"topic":"a","partition":null,"replicas":[1]}', "a", 0, (1,)),
    ('{"topic":"a","replicas":[1]}', "a", 0, (1,)),
    ('{"topic":"a","topic":"b","partition":0,"replicas":[1]}', "b", 0, (1,)),  # every repeat binds, the last wins
    ('{"topic":"a","partition":0,"replicas":["1",1.5,null,true,{},[],2147483648,1e2]}', "a", 0,
     ("1", 1.5, None, True, {}, [], 2147483648, 100.0)),  # String, Double, null, Boolean, Map, List, Long, Double
]


@pytest.mark.parametrize(("entry", "topic", "partition", "replicas"), BINDS)
def test_an_entry_binds_as_kafkas_jackson_binding_does(entry: str, topic: str | None, partition: int,
                                                       replicas: tuple[object, ...]) -> None:
    bound = ReassignPartitionsZNode.decode_bound(f'{{"version":1,"partitions":[{ENTRY},{entry}]}}'.encode(), PATH)
    assert bound.targets.pop(TopicPartition("t", 0)) == (1, 2)  # a valid entry beside it is read too
    usable = topic is not None and all(type(r) is int and r < 2**31 for r in replicas)
    if usable:
        assert topic is not None
        assert bound == BoundReassignment({TopicPartition(topic, partition): replicas}, {})  # type: ignore[dict-item]
    else:
        assert bound == BoundReassignment({}, {(topic, partition): replicas})


@pytest.mark.parametrize("entry", [
    '{"topic":{},"partition":0,"replicas":[1]}', '{"topic":["a"],"partition":0,"replicas":[1]}',
    '{"topic":"a","partition":true,"replicas":[1]}', '{"topic":"a","partition":0,"replicas":5}',
    '{"topic":"a","partition":0,"replicas":""}', '{"topic":"a","partition":0,"replicas":{}}',
    '{"topic":"a","partition":0,"replicas":[1],"partition":"x"}', '""', "true",
])
def test_a_shape_kafkas_binding_refuses_refuses_the_whole_znode(entry: str) -> None:
    error = _refusal(f'{{"version":1,"partitions":[{ENTRY},{entry}]}}'.encode())
    assert ReassignPartitionsZNode.kafka_reads_as_empty(error)


def test_a_repeated_field_must_bind_each_time() -> None:
    assert ReassignPartitionsZNode.kafka_reads_as_empty(_refusal(b'{"version":1,"version":"x","partitions":[]}'))


def test_unusable_entries_are_written_back_as_bound() -> None:
    bound = BoundReassignment({TopicPartition("t", 0): (1, 2)}, {(None, 3): (1,), ("u", 1): ("2", None)})
    assert ReassignPartitionsZNode.decode_bound(ReassignPartitionsZNode.encode_bound(bound), PATH) == bound


def _rewrite_after_completing_t0(edited: bytes) -> bytes:
    """What the controller writes when ``t-0`` completes: the znode as read, less that entry (`encode_bound`)."""
    bound = ReassignPartitionsZNode.decode_bound(edited, PATH)
    return ReassignPartitionsZNode.encode_bound(bound.keeping(lambda key: key != ("t", 0)))


def test_an_unusable_replica_past_pythons_digit_limit_is_written_back_with_its_digits() -> None:
    """A replica of more than 4,300 digits (an edit added it after the znode was created) is a ``BigInteger`` to
    Jackson and written back digit for digit; ``str(int)`` refuses it (ValueError), and the process-wide limit stays."""
    digits = "-" + "9" * 5000
    kept = f'{{"topic":"u","partition":1,"replicas":[{digits},{digits[1:]}7,3]}}'
    written = _rewrite_after_completing_t0(f'{{"version":1,"partitions":[{ENTRY},{kept}]}}'.encode())
    assert written == f'{{"version":1,"partitions":[{kept}]}}'.encode()


@pytest.mark.parametrize(("replica", "jackson_writes"), [
    ("1e400", '"Infinity"'), ("-1e400", '"-Infinity"'),  # a Double, infinite: QUOTE_NON_NUMERIC_NUMBERS
    ("1e7", "1.0E7"), ("1.5e-5", "1.5E-5"), ("0.0001", "1.0E-4"), ("9999999.0", "9999999.0"), ("0.001", "0.001"),
    ("123456789.0", "1.23456789E8"), ("-0.0", "-0.0"), ("1.50E+2", "150.0"), ("4.9e-324", "4.9E-324"),
    ("1e23", "1.0E23"), ("1.7976931348623157e308", "1.7976931348623157E308"),  # Double.toString
    ('"\\ud800"', '"\\uD800"'), ('"\U0001f600"', '"\\uD83D\\uDE00"'), ('"\\u001f\\n"', '"\\u001F\\n"'),
    ('{"k":[2147483648,null,"\\"\\\\"]}', '{"k":[2147483648,null,"\\"\\\\"]}'),
])
def test_an_unusable_replica_is_written_back_as_jackson_writes_what_it_bound(replica: str,
                                                                            jackson_writes: str) -> None:
    """Jackson 2.10's ``UTF8JsonGenerator`` with ``ObjectMapper`` defaults: a ``Double`` by ``Double.toString``, a
    non-finite one as a string; in strings, upper-case ``\\uXXXX`` for control characters and for every UTF-16
    surrogate, a lone one too (Python's encoder cannot write that as UTF-8 at all)."""
    kept = '{{"topic":"u","partition":1,"replicas":[{}]}}'
    written = _rewrite_after_completing_t0(f'{{"version":1,"partitions":[{ENTRY},{kept.format(replica)}]}}'.encode())
    assert written == f'{{"version":1,"partitions":[{kept.format(jackson_writes)}]}}'.encode()
    assert ReassignPartitionsZNode.decode_bound(written, PATH).unusable.keys() == {("u", 1)}


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_a_double_is_written_in_javas_layout_and_reads_back(value: float) -> None:
    text = java_double(value)
    assert float(text) == value and str(float(text)) == str(value)  # the sign of zero too
    mantissa = text.lstrip("-").split("E")[0]
    assert "." in mantissa and mantissa.split(".")[1]  # Java always writes a fraction digit
    assert ("E" in text) == (value != 0 and not 1e-3 <= abs(value) < 1e7)  # Java writes zero 0.0


@given(st.integers(min_value=-(10 ** 5000), max_value=10 ** 5000).map(lambda n: n * 10 ** 4400 + n))
def test_an_integer_of_any_length_is_written_as_its_digits(value: int) -> None:
    text = java_integer_text(value)
    digits = text.removeprefix("-")
    assert text.startswith("-") == (value < 0) and digits.isdigit() and (digits == "0" or digits[0] != "0")
    head = min(len(digits), 1000)  # checked in pieces str() and int() take
    assert abs(value) // 10 ** (len(digits) - head) == int(digits[:head])
    assert abs(value) % 10 ** head == int(digits[-head:])
