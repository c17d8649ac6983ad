"""server.properties read as Kafka reads it: ``Utils.loadProps`` → ``java.util.Properties.load(InputStream)``
(ISO 8859-1, Java's line, separator, whitespace and escape rules; the value keeps its trailing whitespace and
ConfigDef trims it later, for known configs only); `render` writes what reads back exactly."""

from __future__ import annotations

from pathlib import Path

import pytest

from zkcontroller.cluster.server_properties import ConfigError, broker_properties, load, parse_properties, render

BASE = "broker.id=3\nzookeeper.connect=zk1:2181\n"


@pytest.mark.parametrize(("text", "parsed"), [
    ("a = b  ", {"a": "b  "}),  # trailing whitespace is part of the value
    ("a:b", {"a": "b"}), ("a b", {"a": "b"}), ("a \t = \f b", {"a": "b"}), ("a = = b", {"a": "= b"}),
    ("a", {"a": ""}), ("a=", {"a": ""}), ("=b", {"": "b"}),
    ("key\\ with\\ space=v", {"key with space": "v"}), ("a\\=b=c", {"a=b": "c"}), ("a\\:b:c", {"a:b": "c"}),
    ("\\u0041=\\u00e9\\t\\n\\x", {"A": "\u00e9\t\nx"}),
    ("a=\\uD83D\\uDE00", {"a": "\U0001f600"}),  # an escaped surrogate pair is one character
    ("a=1,\\\n    2", {"a": "1,2"}),  # a continuation skips the next line's leading whitespace
    ("a=x\\\\\nb=y", {"a": "x\\", "b": "y"}),  # an even run of backslashes does not continue
    ("  # c\\\nx=1", {"x": "1"}), ("! c\nx=1", {"x": "1"}),  # a comment line never continues
    ("a=1\\\n\nb=2", {"a": "1", "b": "2"}),  # a blank line ends a continued one
    ("a=1\r\nb=2\rc=3", {"a": "1", "b": "2", "c": "3"}),
    ("a=1\\", {"a": "1"}),  # a continuation at the end of the file
    ("\u00a0a=1", {"\u00a0a": "1"}),  # only space, tab and form feed are whitespace
])
def test_properties_load(text: str, parsed: dict[str, str]) -> None:
    assert parse_properties(text) == parsed


def test_a_malformed_unicode_escape_names_the_file() -> None:
    with pytest.raises(ConfigError) as refused:
        parse_properties("a=\\u00zz", "server.properties")
    assert str(refused.value) == "server.properties: Malformed \\uxxxx encoding. in the line 'a=\\\\u00zz'"


def test_trailing_whitespace_is_left_to_configdef() -> None:
    """ConfigDef trims chars up to U+0020: a trailing tab is fine, a trailing no-break space is not."""
    assert broker_properties(parse_properties(BASE + "broker.rack=r1 \t\n")).rack == "r1"
    with pytest.raises(ConfigError) as refused:
        broker_properties(parse_properties("broker.id=3\u00a0\nzookeeper.connect=zk1:2181\n"))
    assert str(refused.value) == "Invalid value 3\u00a0 for configuration broker.id: Not a number of type INT"
    assert broker_properties(parse_properties(BASE + "custom.key=v  \n")).unknown == {"custom.key": "v  "}


def test_the_file_is_read_as_iso_8859_1(tmp_path: Path) -> None:
    path = tmp_path / "server.properties"
    path.write_bytes(BASE.encode() + "broker.rack=\u00e9\ncustom.key=\\u00e9\n".encode())
    p = load(path)
    assert p.rack == "\u00c3\u00a9"  # UTF-8 bytes read as two Latin-1 chars, as Kafka reads them
    assert p.unknown == {"custom.key": "\u00e9"}


def test_render_reads_back_exactly() -> None:
    values = {"log.dirs": "C:\\kafka\\logs", "a key": " lead", "k=1": "x:y#z!", "tab": "a\tb\nc",
              "utf": "\u00e9\u4e2d\U0001f600", "empty": "", "trailing": "v  "}
    text = render(values)
    assert text.isascii()
    assert parse_properties(text) == values


@pytest.mark.parametrize(("given", "refused"), [
    ("broker.id=1001\n", "broker.id must be greater than or equal to -1 and not greater than reserved.broker.max.id"),
    ("broker.id=-2\n", "broker.id must be greater than or equal to -1 and not greater than reserved.broker.max.id"),
    ("broker.id=7\nreserved.broker.max.id=5\n", "not greater than reserved.broker.max.id"),
    ("broker.id=-1\nbroker.id.generation.enable=false\n", "broker.id must be greater than or equal to 0"),
    ("broker.id=-1\n", "automatic broker id generation is not supported"),
    ("zookeeper.connect=zk1:2181\n", "automatic broker id generation is not supported"),  # -1, the default
    ("broker.id=1\nreserved.broker.max.id=-1\n", "reserved.broker.max.id: Value must be at least 0"),
])
def test_broker_id_is_checked_as_kafka_config_checks_it(given: str, refused: str) -> None:
    """``KafkaConfig.validateValues``: with id generation on (the default), 0..``reserved.broker.max.id`` (1000)."""
    with pytest.raises(ConfigError, match=refused.replace(".", r"\.")):
        broker_properties(parse_properties("zookeeper.connect=zk1:2181\n" + given))


def test_broker_ids_above_the_reserved_maximum_are_taken_with_generation_off_or_a_larger_maximum() -> None:
    assert broker_properties(parse_properties(BASE.replace("=3", "=1000"))).broker_id == 1000
    assert broker_properties(parse_properties(BASE.replace("=3", "=5000") + "reserved.broker.max.id=5000\n")
                             ).broker_id == 5000
    assert broker_properties(parse_properties(BASE.replace("=3", "=5000") + "broker.id.generation.enable=false\n")
                             ).broker_id == 5000
