"""The report as a person sees it: pages rendered by headless Chromium, checked on the screenshots, plus the
structure an on-call engineer relies on (timeline first, file:line links, one page per cluster)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from tests.helpers import tool_missing

pytestmark = pytest.mark.spark
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--hide-scrollbars")


def screenshot(page: Path, png: Path, profile: Path, height: int = 2400) -> object:
    """A 1280-wide PNG of ``page`` taken by headless Chromium, as a Pillow image."""
    from PIL import Image

    chromium = shutil.which("chromium") or shutil.which("chromium-browser") or tool_missing(
        "chromium", "neither chromium nor chromium-browser is on PATH (headless screenshots of the report)")
    subprocess.run([chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--window-size=1280,{height}",
                    f"--screenshot={png}", page.as_uri()], check=True, capture_output=True, timeout=120)
    return Image.open(png).convert("RGB")


def _count(image: object, rgb_low: tuple[int, int, int], rgb_high: tuple[int, int, int]) -> int:
    """Pixels whose colour lies between two RGB corners."""
    import numpy as np

    a = np.asarray(image)
    return int(((a >= rgb_low) & (a <= rgb_high)).all(axis=2).sum())


def test_cluster_page_renders_timeline_first_with_split_brain_shaded(analyzed, tmp_path: Path) -> None:
    page = analyzed.out / "report" / "prod.html"
    text = page.read_text(encoding="utf-8")
    headings = re.findall(r"<h2>([^<]+)</h2>", text)
    assert headings[0] == "Incident timeline" and "Controller tenures" in headings
    assert '<a href="../../prod/broker1-controller.log">prod/broker1-controller.log:6</a>' in text
    image = screenshot(page, tmp_path / "prod.png", tmp_path / "profile")
    assert image.size == (1280, 2400)  # type: ignore[attr-defined]
    top = image.crop((0, 0, 1280, 700))  # type: ignore[attr-defined]
    assert _count(top, (0, 0, 0), (250, 250, 250)) > 20_000  # drawn, not blank
    shaded = _count(top, (241, 176, 176), (255, 204, 204))
    assert shaded > 300  # the 1.5 s split-brain window (red, 25% over white) is a visible band, not a hair-line


def test_index_lists_every_cluster_and_warns_about_the_epoch_going_back(analyzed, tmp_path: Path) -> None:
    page = analyzed.out / "report.html"
    text = page.read_text(encoding="utf-8")
    for cluster in ("prod", analyzed.demo_cluster, "sim", "andrei", "guenterh", "broken"):
        assert f'<a href="report/{cluster}.html">{cluster}</a>' in text
        assert (analyzed.out / "report" / f"{cluster}.html").is_file()
    assert "epoch goes back from 10 to 1" in text and "--cluster-pattern" in text
    assert "http://" not in text and "<script" not in text
    image = screenshot(page, tmp_path / "index.png", tmp_path / "profile", height=900)
    assert _count(image, (255, 244, 229), (255, 244, 229)) > 10_000  # the warnings' background colour


def test_a_wide_tables_file_line_links_stay_in_view(tmp_path: Path) -> None:
    """The demo's incident table, a long ``detail`` wide, showed its ``where`` column cut at the page's edge
    ("an-"): the link that traces a row sat behind a horizontal scroll. It now stays pinned at the right."""
    import pandas as pd

    from zkcontroller.analytics import report

    log = tmp_path / "logs" / "controller.log"
    log.parent.mkdir()
    log.write_text("x\n")
    rows = pd.DataFrame({"incident": ["broker_failure"] * 3, "detail": ["broker 1 failed " + "x" * 260] * 3,
                         "source_file": ["logs/controller.log"] * 3, "line_number": [1, 2, 3]})
    table = report._table(rows, report.Links({"logs/controller.log": str(log)}, tmp_path))
    page = tmp_path / "page.html"
    page.write_text(report._page("wide", table), encoding="utf-8")
    image = screenshot(page, tmp_path / "wide.png", tmp_path / "profile", height=300)
    link_blue = _count(image, (0, 0, 200), (60, 60, 255))  # Chromium's unvisited-link colour, rgb(0, 0, 238)
    assert link_blue > 100, link_blue
