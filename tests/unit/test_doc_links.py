"""Links in README.md and docs/*.md resolve: a relative link names a file that exists, and a `#anchor` names a
heading of its target as GitHub slugs it. docs/wire-protocol.md's Versions table links each API to its section."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6} (.+?)\s*#*$", re.MULTILINE)
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped (but `-` and `_`), spaces to `-`."""
    text = re.sub(r"[`*]|\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(doc: Path) -> set[str]:
    """Every anchor of `doc`'s headings, with GitHub's -1, -2... for a repeated one."""
    seen: Counter[str] = Counter()
    out = set()
    for heading in HEADING.findall(FENCE.sub("", doc.read_text())):
        slug = _slug(heading)
        out.add(f"{slug}-{seen[slug]}" if seen[slug] else slug)
        seen[slug] += 1
    return out


def links(doc: Path) -> list[str]:
    """The link targets of `doc`, outside code blocks and code spans."""
    return LINK.findall(re.sub(r"`[^`\n]*`", "", FENCE.sub("", doc.read_text())))


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_relative_link_and_anchor_resolves(doc: Path) -> None:
    broken = []
    for target in links(doc):
        if re.match(r"[a-z]+:", target):
            continue  # http(s), mailto: not checked offline
        path, _, anchor = target.partition("#")
        file = (doc.parent / path).resolve() if path else doc
        if not file.exists():
            broken.append(f"{target}: no {path}")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{target}: no heading with anchor #{anchor} in {file.name}")
    assert not broken, f"{doc.name}: " + "; ".join(broken)


def test_the_slugs_are_githubs() -> None:
    assert _slug("Configuration (`server.properties`)") == "configuration-serverproperties"
    assert _slug("Produce (0)") == "produce-0"
    assert _slug("Differs from Kafka (Produce)") == "differs-from-kafka-produce"


def test_every_api_with_a_section_is_linked_from_the_versions_table() -> None:
    doc = ROOT / "docs" / "wire-protocol.md"
    text = doc.read_text()
    table = text.split("## Versions", 1)[1].split("\n## ", 1)[0]
    sections = {_slug(h) for h in re.findall(r"^### (\w+ \(\d+\))$", text, re.MULTILINE)}
    assert sections, "no API sections found"
    linked = {target[1:] for target in LINK.findall(table) if target.startswith("#")}
    assert sections <= linked, f"sections the Versions table does not link: {sorted(sections - linked)}"
