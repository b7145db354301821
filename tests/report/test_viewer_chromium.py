"""The viewer and the HTML report in a real headless Chromium (Debian's chromium driven by Playwright).

Filters, sorting, pages, the run summary, click-to-zoom with a tool step's input and output side
by side, the multi-run view, live refresh while records arrive, links from the report to the
viewer's filtered list, a wide table that scrolls instead of overflowing, and model strings that
stay text. Screenshots are checked for their elements; set TOOLSIGHT_SCREENSHOTS=DIR to keep them
(docs/img holds the ones in the docs).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from runfixture import make_fixture_run
from toolsight.log import Record, iter_records
from toolsight.metrics import compute_run_metrics
from toolsight.metrics.cost import Price
from toolsight.report import build_report
from toolsight.report.viewer import build_viewer, serve
from toolsight.report.viewer_compare import build_compare

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


def _playwright() -> Any:
    missing = None
    if not Path(CHROMIUM).is_file():
        missing = f"{CHROMIUM} not installed (apt-get install -y chromium)"
    else:
        try:
            from playwright.sync_api import sync_playwright
        except ImportError:
            missing = "playwright is not installed"
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"browser tests need {missing}")
        print(f"SKIP: {missing}")
        pytest.skip(missing)
    return sync_playwright


@pytest.fixture
def page() -> Iterator[Any]:
    with _playwright()() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            pg = browser.new_page(viewport={"width": 1280, "height": 900})
            errors: list[str] = []
            pg.on("pageerror", lambda e: errors.append(str(e)))
            yield pg
            assert not errors, errors  # no script error on any page a test opened
        finally:
            browser.close()


def _shot(page: Any, tmp_path: Path, name: str, full: bool = False) -> Path:
    keep = os.environ.get("TOOLSIGHT_SCREENSHOTS")
    path = (Path(keep) if keep else tmp_path) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(path), full_page=full)
    with Image.open(path) as im:
        assert im.width >= 800 and im.height >= 300
    return path


def _rows(page: Any) -> list[str]:
    return list(page.eval_on_selector_all("tr.task-row", "rs => rs.map(r => r.getAttribute('data-id'))"))


def _status(run_dir: Path) -> dict[str, str]:
    out = {}
    for r in iter_records(run_dir):
        if r.error or (r.score and r.score.error):
            out[r.task_id] = "error"
        else:
            out[r.task_id] = "correct" if r.score and r.score.passed else "incorrect"
    return out


def _check_site(page: Any, index: Path, run_dir: Path) -> None:
    recs = list(iter_records(run_dir))
    status = _status(run_dir)
    page.goto(index.as_uri())
    assert len(_rows(page)) == len(recs) and page.inner_text("#count") == str(len(recs))
    page.select_option("#f-status", "incorrect")
    n_inc = sum(1 for s in status.values() if s == "incorrect")
    assert len(_rows(page)) == n_inc and page.inner_text("#count") == str(n_inc)
    assert "status=incorrect" in page.url
    page.select_option("select.f-tag[data-tag='category']", "ocr")
    want = sum(1 for r in recs if status[r.task_id] == "incorrect" and r.tags["category"] == "ocr")
    assert len(_rows(page)) == want
    page.select_option("#f-status", "error")
    page.select_option("select.f-tag[data-tag='category']", "")
    assert len(_rows(page)) == sum(1 for s in status.values() if s == "error") == 1
    page.select_option("#f-status", "")
    page.fill("#f-text", "task-00001")
    assert _rows(page) == ["task-00001"]
    page.click("a[href='tasks/task-00001.html']")
    page.wait_for_load_state("load")
    assert page.inner_text("h1").startswith("task-00001")
    sizes = page.evaluate("Array.from(document.images).map(i => i.complete ? i.naturalWidth : -1)")
    assert len(sizes) >= 4 and all(w > 0 for w in sizes), sizes
    rec = next(r for r in recs if r.task_id == "task-00001")
    assert page.inner_text("td.gold") == rec.extra["gold"][0]
    assert "crop → rotate" in page.inner_text("body")
    page.click("#next")
    page.wait_for_load_state("load")
    assert page.inner_text("h1").startswith("task-00002")
    body = page.inner_text("body")
    assert "python_image_processing" in body
    assert body.count("ToolError: box outside the image") == 1  # a failed tool's error, printed once
    page.click("#back")
    page.wait_for_load_state("load")
    assert "index.html" in page.url


def test_filters_and_pages_linked_and_copied(run_dir: Path, tmp_path: Path, page: Any) -> None:
    linked = build_viewer(run_dir)
    copied = build_viewer(run_dir, tmp_path / "site")
    _check_site(page, linked, run_dir)
    shutil.rmtree(run_dir / "artifacts")
    _check_site(page, copied, run_dir)  # the copied site stands alone


def test_click_to_zoom_shows_input_and_output_side_by_side(run_dir: Path, tmp_path: Path, page: Any) -> None:
    index = build_viewer(run_dir)
    page.goto((index.parent / "tasks" / "task-00001.html").as_uri())
    step = page.locator(".io").nth(1)  # the crop step: input -> crop
    thumb = step.locator(".outputs img.art").first
    thumb_w = thumb.evaluate("i => i.getBoundingClientRect().width")
    thumb.click()
    page.wait_for_selector("#lightbox.open")
    page.wait_for_function("Array.from(document.querySelectorAll('#lb-panes img')).every(i => i.complete"
                           " && i.naturalWidth > 0 && i.style.width)")
    panes = page.eval_on_selector_all(
        "#lb-panes figure", "fs => fs.map(f => [f.querySelector('figcaption').textContent,"
        " f.querySelector('img').getBoundingClientRect().width, f.querySelector('img').getBoundingClientRect().left])")
    assert [p[0].split(":")[0] for p in panes] == ["input", "output"]
    assert panes[0][2] < panes[1][2]  # side by side, input on the left
    assert all(p[1] > 3 * thumb_w for p in panes), (panes, thumb_w)  # enlarged to fit the screen
    assert "crop: input → output" in page.inner_text("#lb-title")
    page.click("#lightbox [data-zoom='1']")
    natural = page.eval_on_selector("#lb-panes img", "i => [i.naturalWidth, i.getBoundingClientRect().width]")
    assert abs(natural[0] - natural[1]) < 1
    page.click("#lightbox [data-zoom='fit']")
    _shot(page, tmp_path, "viewer-zoom.png")
    page.keyboard.press("Escape")
    assert not page.is_visible("#lightbox")


def test_sorting_and_pagination_keep_their_state_in_the_url(run_dir: Path, tmp_path: Path, page: Any) -> None:
    index = build_viewer(run_dir)
    page.goto(index.as_uri() + "#per=5")
    assert len(_rows(page)) == 5 and page.inner_text("#page-info") == "page 1 of 3"
    page.click("th[data-sort='tokens']")  # numbers sort largest first on the first click
    tokens = {r.task_id: r.trajectory.usage.input_tokens + r.trajectory.usage.output_tokens
              for r in iter_records(run_dir)}
    ranked = sorted(tokens, key=lambda t: (-tokens[t], list(tokens).index(t)))
    assert _rows(page) == ranked[:5]
    assert page.get_attribute("th[data-sort='tokens']", "aria-sort") == "descending"
    page.click("#next-page")
    assert _rows(page) == ranked[5:10] and "page=2" in page.url and "sort=tokens" in page.url
    page.click("th[data-sort='tokens']")
    assert _rows(page) == list(reversed(ranked))[:5]  # ascending, back to page 1
    page.click("th[data-sort='value']")
    page.select_option("#per-page", "25")
    values = page.eval_on_selector_all("tr.task-row td:nth-child(3)", "ts => ts.map(t => t.textContent)")
    nums = [float(v.rstrip("%")) for v in values if v != "–"]
    assert nums == sorted(nums, reverse=True) and values[-1] == "–"  # unscored last
    assert page.get_attribute("th[data-sort='value']", "aria-sort") == "descending"
    _shot(page, tmp_path, "viewer-sorting.png")
    url = page.url
    page.goto("about:blank")
    page.goto(url)  # a link with the hash reproduces the view
    assert page.get_attribute("th[data-sort='value']", "aria-sort") == "descending"


def test_run_summary_has_accuracy_ci_tokens_and_config(run_dir: Path, tmp_path: Path, page: Any) -> None:
    m = compute_run_metrics(run_dir)
    index = build_viewer(run_dir, prices={"mock/alpha": Price(input=2.5, output=10.0)})
    page.goto(index.as_uri())
    card = page.inner_text("#sum-score")
    assert m.overall.score.value is not None and m.overall.score.lo is not None and m.overall.score.hi is not None
    assert f"{100 * m.overall.score.value:.1f}%" in card
    assert f"95% CI {100 * m.overall.score.lo:.1f}% – {100 * m.overall.score.hi:.1f}%" in card
    assert f"{m.usage.input_tokens + m.usage.output_tokens:,}" in page.inner_text("#sum-tokens")
    assert "$" in page.inner_text("#sum-cost")
    assert f"{m.n_errors} run · {m.n_score_errors} score" in page.inner_text("#sum-errors")
    page.click("#config summary")
    cfg = page.inner_text("#config")
    assert "mock/alpha" in cfg and "code" in cfg and "fixture" in cfg
    _shot(page, tmp_path, "viewer-summary.png")


def test_two_runs_side_by_side(two_runs: tuple[Path, Path], tmp_path: Path, page: Any) -> None:
    base, code = two_runs
    index = build_compare([base, code])
    sb, sc = _status(base), _status(code)
    page.goto(index.as_uri())
    assert len(_rows(page)) == 16
    page.select_option("#f-agree", "differ")
    differ = sorted(t for t in sb if sb[t] != sc[t])
    assert sorted(_rows(page)) == differ and differ
    summary = page.inner_text("#run-summary")
    for d in (base, code):
        v = compute_run_metrics(d).overall.score.value
        assert v is not None and f"{100 * v:.1f}%" in summary
    _shot(page, tmp_path, "viewer-compare-list.png")
    page.click(f"a[href='tasks/{differ[0]}.html']")
    page.wait_for_load_state("load")
    cols = page.eval_on_selector_all(".runs > .run", "rs => rs.map(r => [r.querySelector('h2').textContent,"
                                     " r.querySelector('.run-status').textContent, r.getBoundingClientRect().left])")
    assert [c[0] for c in cols] == ["mock/alpha · base", "mock/alpha · code"]
    assert [c[1] for c in cols] == [sb[differ[0]], sc[differ[0]]]
    assert cols[0][2] < cols[1][2]  # side by side
    sizes = page.evaluate("Array.from(document.images).map(i => i.complete ? i.naturalWidth : -1)")
    assert sizes and all(w > 0 for w in sizes)
    page.goto((index.parent / "tasks" / "task-00001.html").as_uri())
    _shot(page, tmp_path, "viewer-compare.png")


def test_live_refresh_while_records_arrive(run_dir: Path, page: Any) -> None:
    lines = (run_dir / "records.jsonl").read_text().splitlines(keepends=True)
    (run_dir / "records.jsonl").write_text("".join(lines[:5]))
    index = build_viewer(run_dir)
    server = serve(index.parent, 0, background=True, rebuild=lambda: build_viewer(run_dir), watch=[run_dir])
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/viewer/index.html#status=incorrect"
        page.goto(url)
        page.wait_for_function("document.getElementById('live').style.display !== 'none'")
        assert "5 record(s)" in page.inner_text("#live")
        with (run_dir / "records.jsonl").open("a") as fh:
            fh.write("".join(lines[5:]))  # the run writes the rest
        page.wait_for_function("document.getElementById('live').textContent.indexOf('12 record(s)') >= 0",
                               timeout=30_000)
        page.wait_for_function("document.querySelectorAll('tr.task-row').length > 0")
        want = sum(1 for s in _status(run_dir).values() if s == "incorrect")
        assert page.inner_text("#count") == str(want) and "status=incorrect" in page.url  # filter kept
    finally:
        server.shutdown()
        server.server_close()


def test_model_strings_stay_text(run_dir: Path, page: Any) -> None:
    evil = '<img src=x onerror="document.title=\'pwned\'"><svg onload=alert(1)>'
    recs = list(iter_records(run_dir))
    data = recs[0].model_dump(mode="json")
    data["trajectory"]["turns"][0]["answer"] = evil
    data["tags"] = {**data["tags"], "category": "<b>x</b>"}
    recs[0] = Record.model_validate(data)
    (run_dir / "records.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in recs))
    index = build_viewer(run_dir)
    page.goto(index.as_uri())
    assert page.title() != "pwned"
    assert page.evaluate("document.querySelectorAll('#task-body img, #task-body svg, #task-body b').length") == 0
    assert evil in page.inner_text("#task-body")
    page.goto((index.parent / "tasks" / f"{recs[0].task_id}.html").as_uri())
    assert page.title() != "pwned" and evil in page.inner_text("body")


def test_html_report_links_to_the_filtered_viewer_and_does_not_overflow(tmp_path: Path, page: Any) -> None:
    run = make_fixture_run(tmp_path, name="wide", setting="code", n_tasks=12, seed=3)
    recs = list(iter_records(run))
    for k, r in enumerate(recs):  # many distinct, long tool names: a wide tool-share table
        data = r.model_dump(mode="json")
        for c in data["trajectory"]["tool_calls"]:
            c["name"] = f"opencv_{c['name']}_with_a_rather_long_name_{k}"
        recs[k] = Record.model_validate(data)
    (run / "records.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in recs))
    build_viewer(run)
    out = tmp_path / "rep"
    build_report([run], by=["category"], fmt="html", out_dir=out)
    page.goto((out / "report.html").as_uri())
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    wide = page.evaluate("Array.from(document.querySelectorAll('.table-wrap')).some("
                         "w => w.scrollWidth > w.clientWidth)")
    assert wide  # the share table scrolls inside its box
    page.click("a.viewer[href$='#category=ocr']")
    page.wait_for_load_state("load")
    want = sum(1 for r in iter_records(run) if r.tags["category"] == "ocr")
    assert page.inner_text("#count") == str(want)
    assert page.eval_on_selector("select.f-tag[data-tag='category']", "s => s.value") == "ocr"
    page.go_back()
    page.click("a.viewer[href$='#status=error']")
    page.wait_for_load_state("load")
    assert page.inner_text("#count") == "1"




def test_a_folder_of_runs_index_then_compare_at_1400_px(two_runs: tuple[Path, Path], tmp_path: Path, page: Any) -> None:
    """`toolsight view DIR --serve`: the index lists both runs; ticking them and pressing compare opens
    their comparison, whose tables scroll inside the page instead of widening it (issue 28, item 6)."""
    import threading

    from toolsight.report.viewer_folder import build_folder_viewer, compare_action
    from toolsight.report.viewer_serve import make_site_server

    folder = two_runs[0].parent
    index = build_folder_viewer(folder)
    server = make_site_server(folder, 0, "viewer/index.html", actions={"/compare": compare_action(folder)})
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        page.set_viewport_size({"width": 1400, "height": 900})
        page.goto(f"http://127.0.0.1:{server.server_address[1]}/")
        assert page.url.endswith("/viewer/index.html") and index.is_file()
        names = page.eval_on_selector_all("#runs tbody tr", "rs => rs.map(r => r.getAttribute('data-run'))")
        assert sorted(names) == ["base-run", "code-run"]
        assert page.is_disabled("#compare")
        _shot(page, tmp_path, "viewer-folder.png")
        page.check("input.pick[value='base-run']")
        page.check("input.pick[value='code-run']")
        page.click("#compare")
        page.wait_for_load_state("load")
        assert page.url.rsplit("/compare/", 1)[-1] in ("base-run--code-run/index.html", "code-run--base-run/index.html"), page.url
        assert len(_rows(page)) == 16
        assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
        _shot(page, tmp_path, "viewer-folder-compare.png")
    finally:
        server.shutdown()
        server.server_close()
