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

from arbwb.report.html import _csv_table, with_table_script

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
    long_tables: document.querySelectorAll('table.arbwb-enhanced').length,
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


#: The text of each body row a table shows (Polars puts a dtype row of ``td`` in its head).
_VISIBLE = """t => [...t.tBodies[0].rows]
  .filter(r => r.querySelector('td') && r.style.display !== 'none').map(r => r.textContent)"""


def _search_a_long_table(browser: Any, path: Path) -> None:
    """On a real report page: a header click marks the sort, typing one row's text in the
    search box leaves only the rows holding it, and the page stays error-free."""
    page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(path.as_uri())
    table = page.locator("table.arbwb-enhanced >> visible=true").first
    assert 12 < len(table.evaluate(_VISIBLE)) <= 25  # one page of a long table
    header = table.locator("th.arbwb-sortable").first
    header.click()
    assert header.get_attribute("aria-sort") == "ascending"
    needle = table.evaluate(_VISIBLE)[-1].strip()
    table.locator("xpath=preceding-sibling::input[1]").fill(needle)
    after = table.evaluate(_VISIBLE)
    assert after and all(needle.lower() in row.lower() for row in after)
    pager = table.locator("xpath=following-sibling::div[@class='arbwb-pager'][1]").inner_text()
    shown, total = (int(n) for n in pager.split("(")[1].split(" rows")[0].split(" of "))
    assert shown == len(after) < total, pager
    page.close()
    assert not errors, errors


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
    long_tables: dict[Path, int] = {}
    for path in pages:
        screenshot = Path(shots) / f"{path.stem}.png" if shots and path.stem in wanted else None
        seen = _visit(browser, path, screenshot)
        images += seen["images"]
        long_tables[path] = seen["long_tables"]
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
    with_long = [path for path, count in long_tables.items() if count]
    assert with_long, long_tables  # some table is long enough to sort, filter and page
    _search_a_long_table(browser, with_long[-1])


_ROWS = """() => [...document.querySelectorAll('table.arbwb-enhanced tr')]
  .filter(r => r.querySelector('td') && r.style.display !== 'none')
  .map(r => [...r.cells].map(c => c.textContent.trim()))"""


def _long_table_page(tmp_path: Path) -> Path:
    """A page with one 40-row table as the index renders it: scores with infinities and a gap."""
    scores = {3: "inf", 7: "-inf", 11: ""}
    lines = ["run,score", *(f"r{i},{scores.get(i, (i * 7) % 40 / 4)}" for i in range(40))]
    (tmp_path / "scores.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    table = _csv_table(tmp_path / "scores.csv", max_rows=40, collapse=False)
    page = tmp_path / "long.html"
    page.write_text(with_table_script(f"<html><body>{table}</body></html>"), encoding="utf-8")
    return page


def test_a_long_table_sorts_filters_and_pages(browser: Any, tmp_path: Path) -> None:
    """A header click sorts numbers as numbers (infinities as words at the ends, the blank
    last), the search box keeps matching rows, 25 rows show per page; no console errors."""
    page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(_long_table_page(tmp_path).as_uri())
    rows = page.evaluate(_ROWS)
    assert [r[0] for r in rows] == [f"r{i}" for i in range(25)]  # page 1 of 2, file order
    assert page.inner_text(".arbwb-page") == "page 1 of 2 (40 of 40 rows)"
    page.click("th:has-text('score')")
    rows = page.evaluate(_ROWS)
    assert rows[0] == ["r7", "minus infinity"] and rows[1][1] == "0.0000"
    values = [float(v) for _, v in rows[1:]]
    assert values == sorted(values)
    page.click("th:has-text('score')")  # again: descending, the blank still last
    assert page.evaluate(_ROWS)[0] == ["r3", "infinity"]
    page.click(".arbwb-next")
    assert page.evaluate(_ROWS)[-1][0] == "r11"
    page.fill(".arbwb-search", "r3")
    rows = page.evaluate(_ROWS)
    assert sorted(r[0] for r in rows) == sorted(["r3", *(f"r{i}" for i in range(30, 40))])
    assert rows[0] == ["r3", "infinity"]  # the filter keeps the sort
    assert page.inner_text(".arbwb-page") == "page 1 of 1 (11 of 40 rows)"
    assert page.evaluate("document.documentElement.scrollWidth <= innerWidth")
    page.close()
    assert not errors, errors


def test_a_frame_cut_short_by_polars_pages_its_shown_rows_only(
    browser: Any, tmp_path: Path
) -> None:
    """Polars' HTML repr of a long frame ends its shown rows with a row of "…": that row is
    hidden and never sorted, and the search box says it filters the rows shown."""
    import polars as pl

    frame = pl.DataFrame({"run": [f"r{i}" for i in range(300)], "score": list(range(300))})
    with pl.Config(tbl_rows=30):
        table = frame._repr_html_()
    page_path = tmp_path / "cut.html"
    page_path.write_text(with_table_script(f"<html><body>{table}</body></html>"), "utf-8")
    page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
    page.goto(page_path.as_uri())
    assert page.get_attribute(".arbwb-search", "placeholder") == "filter 30 rows shown"
    assert page.inner_text(".arbwb-page") == "page 1 of 2 (30 of 30 rows shown)"
    page.click("th:has-text('score')")
    page.click("th:has-text('score')")  # descending: the "…" row is not data, so not first
    dtypes, first = page.evaluate(_ROWS)[:2]  # Polars' dtype row stays in the header
    assert dtypes == ["str", "i64"] and first == ['"r299"', "299"]
    page.click(".arbwb-next")
    assert all("…" not in cell for row in page.evaluate(_ROWS) for cell in row)
    page.close()
