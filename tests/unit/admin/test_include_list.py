"""``--topic`` patterns as Kafka's TopicFilter rewrites them: ``String.trim`` (chars up to U+0020 only), commas
to ``|``, spaces and surrounding quotes dropped; a bad pattern is named as rewritten."""

from __future__ import annotations

import pytest

from zkcontroller.admin.describe import include_list_regex
from zkcontroller.admin.errors import AdminOperationError


@pytest.mark.parametrize(("raw", "topic", "matches"), [
    ("\x00t\x1f", "t", True), ("\tt\n", "t", True), (" 'a, b' ", "b", True),
    ("t\u00a0", "t", False),  # a no-break space is not trimmed: the pattern wants it
    ("t\u00a0", "t\u00a0", True),
])
def test_trimmed_as_java(raw: str, topic: str, matches: bool) -> None:
    assert bool(include_list_regex(raw).fullmatch(topic)) is matches


def test_an_invalid_pattern_is_named_as_rewritten() -> None:
    with pytest.raises(AdminOperationError) as refused:
        include_list_regex(" a, ( ")
    assert str(refused.value) == "a|( is an invalid regex."
