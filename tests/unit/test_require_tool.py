"""`tool_missing`/`require_tool` (tests/helpers.py): a missing tool skips a local run and fails a run that must
have every tool (scripts/test.sh, CI's command, sets ZKCONTROLLER_REQUIRE_TOOLS=1 after installing them)."""

from __future__ import annotations

import shutil

import pytest
from tests.helpers import REQUIRE_TOOLS, require_tool, tool_missing, tools_required


@pytest.fixture
def local(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    monkeypatch.delenv(REQUIRE_TOOLS, raising=False)
    monkeypatch.delenv("CI", raising=False)
    return monkeypatch


def test_a_local_run_skips_saying_which_tool_and_why(local: pytest.MonkeyPatch) -> None:
    with pytest.raises(pytest.skip.Exception, match=r"^kcat unavailable: not on PATH$"):
        tool_missing("kcat", "not on PATH")


@pytest.mark.parametrize(("name", "value"), [(REQUIRE_TOOLS, "1"), ("CI", "true")])
def test_a_run_that_requires_the_tools_fails(local: pytest.MonkeyPatch, name: str, value: str) -> None:
    local.setenv(name, value)
    assert tools_required()
    with pytest.raises(pytest.fail.Exception, match=r"^zookeeper unavailable: no jar; this run must have it"):
        tool_missing("zookeeper", "no jar")


def test_empty_zero_or_false_does_not_require_them(local: pytest.MonkeyPatch) -> None:
    for name in (REQUIRE_TOOLS, "CI"):
        for value in ("", "0", "false", "False"):
            local.setenv(name, value)
            assert not tools_required(), (name, value)
        local.delenv(name)


def test_require_tool_gives_the_path_of_a_present_tool_and_skips_an_absent_one(local: pytest.MonkeyPatch) -> None:
    assert require_tool("sh", "needed") == shutil.which("sh")
    with pytest.raises(pytest.skip.Exception, match="no-such-tool-here unavailable: needed"):
        require_tool("no-such-tool-here", "needed")
