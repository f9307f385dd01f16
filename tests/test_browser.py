"""The demo report as a reader sees it: index.html and every notebook page in headless Chromium.

Needs Playwright's Python package and a system Chromium (``apt-get install -y chromium``; no
browser download). Skipped with the reason when either is missing, except where
``ARBWB_REQUIRE_BROWSER=1`` (``.ci/run`` sets it after installing Chromium): there a missing
browser fails the run instead of passing it silently.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow]

WIDTH, HEIGHT = 1400, 900
#: Polars' text repr: the frame's shape, then a box drawn in Unicode (its HTML repr has the
#: shape too, but no box), so text holding both is a frame printed as text.
FRAME_AS_TEXT = ("shape: (", "┌")

_PROBE = """() => {
  const root = document.documentElement;
  const pre = [...document.querySelectorAll('pre, .jp-RenderedText')];
  return {
    overflow: root.scrollWidth - root.clientWidth,
    images: document.images.length,
    broken: [...document.images].filter(i => !i.complete || i.naturalWidth === 0)
      .map(i => (i.getAttribute('alt') || i.src).slice(0, 80)),
    frames_as_text: pre.filter(p => FRAME.every(t => p.textContent.includes(t))).length,
  };
}""".replace("FRAME", json.dumps(FRAME_AS_TEXT))


def _missing(reason: str) -> NoReturn:
    """Skip, or fail where ``ARBWB_REQUIRE_BROWSER=1`` promises a browser."""
    if os.environ.get("ARBWB_REQUIRE_BROWSER") == "1":
        pytest.fail(reason)
    pytest.skip(reason)


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("needs playwright (pip install -e '.[dev]')")
    executable = _chromium()
    if executable is None:
        _missing("needs a system Chromium (apt-get install -y chromium)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        yield chromium
        chromium.close()


def _pages(report: Path) -> list[Path]:
    return [report / "index.html", *sorted((report / "notebooks").glob("*.html"))]


def _visit(browser: Any, page_path: Path, screenshot: Path | None = None) -> dict[str, Any]:
    """Open one page at 1,400 px; its probe values plus every console or page error."""
    page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(page_path.as_uri())
    page.wait_for_load_state("load")
    result: dict[str, Any] = page.evaluate(_PROBE)
    if screenshot is not None:
        page.screenshot(path=str(screenshot))
    page.close()
    return result | {"errors": errors}


def test_the_probe_sees_overflow_broken_images_and_text_frames(
    browser: Any, tmp_path: Path
) -> None:
    """The checks can fail: a planted wide table, missing image and printed frame are caught."""
    bad = tmp_path / "bad.html"
    bad.write_text(
        "<html><body><table style='width:3000px'><tr><td>x</td></tr></table>"
        "<img src='missing.png' alt='gone'><pre>shape: (2, 3)\n┌─────┐</pre>"
        "<script>console.error('planted')</script></body></html>",
        encoding="utf-8",
    )
    seen = _visit(browser, bad)
    assert seen["overflow"] > 1000
    assert seen["broken"] == ["gone"]
    assert seen["frames_as_text"] == 1
    assert "planted" in seen["errors"]
    assert any("ERR_FILE_NOT_FOUND" in e for e in seen["errors"])  # the missing image


def test_every_report_page_reads_cleanly_in_chromium(browser: Any, demo_report: Path) -> None:
    """index.html and all nine notebook pages: images load, no console errors, nothing wider
    than 1,400 px, no frame printed as text. ``ARBWB_SCREENSHOTS=DIR`` saves the first screen
    of the index and of notebooks 01 and 05 there (the PNGs in docs/screenshots/)."""
    pages = _pages(demo_report)
    assert len(pages) == 10
    shots = os.environ.get("ARBWB_SCREENSHOTS")
    wanted = {"index", "01-leaderboard", "05-budget-curves"}
    problems = {}
    images = 0
    for path in pages:
        screenshot = Path(shots) / f"{path.stem}.png" if shots and path.stem in wanted else None
        seen = _visit(browser, path, screenshot)
        images += seen["images"]
        bad = {
            k: v
            for k, v in seen.items()
            if (k == "overflow" and v > 0)
            or (k in ("broken", "errors") and v)
            or (k == "frames_as_text" and v)
        }
        if bad:
            problems[path.name] = bad
    assert not problems, problems
    assert images >= 30  # the index shows every figure, the notebook pages embed theirs
