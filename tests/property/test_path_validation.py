"""`validate_path`'s one-regex shortcut for plain paths must agree with ZooKeeper's rules checked one by one."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zkcontroller.coordination.api import check_path_rules, validate_path
from zkcontroller.coordination.errors import BadArgumentsError

# Slashes and dots often, so empty names, "." and "..", trailing slashes and dot-led names all come up; a few
# characters ZooKeeper refuses and a few it accepts that the shortcut leaves to the rules.
_PATHS = st.text(alphabet=st.sampled_from(list("/./ab_-9Z:é\u0001\ud7ff\ue000\ufff5")), max_size=12)


def _verdict(check, path: str, sequential: bool) -> str | None:  # type: ignore[no-untyped-def]
    try:
        check(path, sequential=sequential)
    except BadArgumentsError as e:
        return str(e)
    return None


@given(path=_PATHS, sequential=st.booleans())
def test_validate_path_agrees_with_the_rules(path: str, sequential: bool) -> None:
    assert _verdict(validate_path, path, sequential) == _verdict(check_path_rules, path, sequential)


@given(path=_PATHS.map(lambda p: "/" + p))
def test_rooted_paths_agree_too(path: str) -> None:
    assert _verdict(validate_path, path, False) == _verdict(check_path_rules, path, False)


@pytest.mark.parametrize("path", ["/a/..", "/a/.", "//a", "/a/", "/a\u0001b", "a/b", ""])
def test_refused_paths_are_refused(path: str) -> None:
    with pytest.raises(BadArgumentsError):
        validate_path(path)
