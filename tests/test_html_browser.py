"""The HTML explorer in a real headless Chromium, used as a person uses it.

Open the page, click a finding and see its nodes highlighted and in view, open a rolled-up
block, search a parameter, filter, and check that hostile names stay text in every view the
page lays out itself. The page's own DOT for a state is compared with Python's for the same
state, so the views laid out in the page are the ones Python would draw. A screenshot of the
sample's explorer and the explorer's timings are saved for a reviewer to look at, in the folder
``GRAPHAUDIT_TEST_OUT`` names (e.g. ``GRAPHAUDIT_TEST_OUT=out``), else in pytest's temporary
folder (the ``out`` fixture of ``tests/conftest.py``): a test run leaves the checkout as it was.

Needs Debian's ``chromium`` and ``chromium-driver`` packages, the ``selenium`` Python package
and Graphviz's ``dot``; skipped when any is missing. The large networks are marked ``slow``.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from mindspore import Tensor, nn
from nets import Repeated, tensor
from render_nets import EVIL_KEY, EVIL_PARAM, Hostile, big_net, evil_report, nested_report, sample_report

import graphaudit
from graphaudit.draw.dot import draw
from graphaudit.draw.explorer import explorer_model, state_dot
from graphaudit.report.render import loss_of, render_report

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
HANG = 300  # seconds: a page that is not ready by then never will be (costs are the benchmarks')

pytestmark = [
    pytest.mark.browser,
    pytest.mark.needs_dot,
    pytest.mark.skipif(
        CHROMIUM is None or not Path(CHROMEDRIVER).exists(), reason="chromium is not installed"
    ),
    pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed"),
]
webdriver = pytest.importorskip("selenium.webdriver")
from selenium.common.exceptions import NoAlertPresentException  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import Select  # noqa: E402


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[webdriver.Chrome]:
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM  # type: ignore[assignment]
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--no-first-run",
        "--disable-sync",
        "--window-size=1400,1000",
        f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    driver.set_script_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def sample() -> graphaudit.Report:
    return sample_report()


APP = "document.querySelector('.ga-app')"
EXPLORER = f"{APP}.gaExplorer"


def open_report(driver: webdriver.Chrome, report: graphaudit.Report, path: Path, **options: Any) -> float:
    """Open *report*'s page; return the seconds from asking for it until the explorer is ready."""
    page = render_report(report, path, **options).resolve().as_uri()
    start = time.perf_counter()
    driver.get(page)
    while not driver.execute_script(f"return {APP}.hasAttribute('data-ready-ms')"):
        if time.perf_counter() - start > HANG:
            status = driver.execute_script(f"return {APP}.querySelector('.ga-status').textContent")
            raise AssertionError(f"the explorer never became ready; its status line says: {status}")
        time.sleep(0.01)
    return time.perf_counter() - start


def settle(driver: webdriver.Chrome) -> str:
    """Wait until no layout is running; return the status line."""
    end = time.monotonic() + HANG
    while time.monotonic() < end:
        busy = driver.execute_script(f"return {APP}.querySelector('.ga-canvas.ga-busy') !== null")
        status = driver.execute_script(f"return {APP}.querySelector('.ga-status').textContent")
        if not busy and not status.startswith("laying out"):
            return status
        time.sleep(0.02)
    raise AssertionError("the page never finished laying out")


def in_view(driver: webdriver.Chrome, element_id: str) -> bool:
    """Whether the drawn box *element_id* is inside the drawing's panel, which is inside the window."""
    return driver.execute_script(
        """
        const app = document.querySelector('.ga-app'), canvas = app.querySelector('.ga-canvas.ga-network');
        const box = canvas.querySelector('g[id="' + arguments[0] + '"]');
        if (!box) return false;
        const r = box.getBoundingClientRect(), c = canvas.getBoundingClientRect();
        const inside = r.left >= c.left - 1 && r.right <= c.right + 1 && r.top >= c.top - 1 && r.bottom <= c.bottom + 1;
        return inside && r.width > 0 && c.top >= 0 && c.bottom <= window.innerHeight + 1;
        """,
        element_id,
    )


def highlighted(driver: webdriver.Chrome) -> list[str]:
    return driver.execute_script(
        f"return Array.from({APP}.querySelectorAll('.ga-canvas g.ga-hl')).map(g => g.id)"
    )


def python_dot(report: graphaudit.Report, driver: webdriver.Chrome, **options: Any) -> str:
    """Python's DOT for the state the page shows (the page was rendered with *options*)."""
    options.setdefault("loss", loss_of(report))
    drawing = draw(report.graph, report.findings, title=report.network or None, **options)
    state = driver.execute_script(f"return {EXPLORER}.state()")
    head = explorer_model(drawing, report.graph)["head"]
    return state_dot(drawing, head, state["open"], state["active"])[0]


def no_alert(driver: webdriver.Chrome) -> bool:
    try:
        driver.switch_to.alert  # noqa: B018
    except NoAlertPresentException:
        return True
    return False


def click_row(driver: webdriver.Chrome, check_id: str) -> Any:
    row = next(
        r
        for r in driver.find_elements(By.CSS_SELECTOR, "tr.ga-finding")
        if r.get_attribute("data-check") == check_id
    )
    row.click()
    settle(driver)
    return row


def test_the_sample_explorer(
    browser: webdriver.Chrome, sample: graphaudit.Report, tmp_path: Path, out: Path
) -> None:
    open_report(browser, sample, tmp_path / "sample.html")
    assert browser.execute_script(f"return {EXPLORER}.buildDot()") == python_dot(sample, browser)
    browser.save_screenshot(str(out / "sample-explorer.png"))
    row = click_row(browser, "GA401")  # the sigmoid, the output and the loss it feeds
    targets = ["ga-op_3a__2f_sigmoid_23_5", "ga-output_3a_0", "ga-loss_3a_BCEWithLogitsLoss"]
    assert sorted(highlighted(browser)) == sorted(targets) and all(in_view(browser, t) for t in targets)
    assert "ga-selected" in row.get_attribute("class")
    details = browser.find_element(By.CSS_SELECTOR, ".ga-details").text
    assert "GA401" in details and "BCEWithLogitsLoss applies a sigmoid" in details and "Fix:" in details
    browser.save_screenshot(str(out / "sample-explorer-finding.png"))
    assert browser.execute_script("return performance.getEntriesByType('resource').map(e => e.name)") == []


def test_clicking_a_finding_highlights_its_nodes_in_view(browser: webdriver.Chrome, tmp_path: Path) -> None:
    report = graphaudit.audit(Repeated(), inputs=tensor(1, 4))
    open_report(browser, report, tmp_path / "repeated.html")
    rows = browser.find_elements(By.CSS_SELECTOR, "tr.ga-finding")
    assert len(rows) == len(report.findings) > 0
    canvas = browser.find_element(By.CSS_SELECTOR, ".ga-canvas.ga-network")
    ActionChains(browser).move_to_element(canvas).click_and_hold().move_by_offset(
        400, 250
    ).release().perform()
    row = click_row(browser, "GA101")  # after panning the drawing away
    targets = [f"ga-call_3a_layers_2e_0_23_{k}" for k in (1, 2, 3)] + ["ga-call_3a_layers_23_1"]
    assert sorted(highlighted(browser)) == sorted(targets) and all(in_view(browser, t) for t in targets[:3])
    # Clicking a flagged node in the graph selects its finding, without scrolling the page.
    rows[-1].click()
    settle(browser)
    browser.find_element(By.CSS_SELECTOR, f'g[id="{targets[1]}"] text').click()
    assert "ga-selected" in row.get_attribute("class")
    assert browser.execute_script("return window.scrollY") == 0
    assert "layers.0 (call 2/3)" in browser.find_element(By.CSS_SELECTOR, ".ga-details h3").text


class Stack(nn.Cell):
    """A stem, six blocks of one structure (rolled up into one box) and a head."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Dense(4, 8)
        self.blocks = nn.SequentialCell([nn.SequentialCell([nn.Dense(8, 8), nn.ReLU()]) for _ in range(6)])
        self.head = nn.Dense(8, 2)

    def construct(self, x: Tensor) -> Tensor:
        return self.head(self.blocks(self.stem(x)))


def test_opening_a_rolled_up_block_and_closing_it(browser: webdriver.Chrome, tmp_path: Path) -> None:
    report = graphaudit.audit(Stack(), inputs=tensor(1, 4))
    open_report(browser, report, tmp_path / "stack.html", rollup=True)
    rollup = "ga-rollup_3a_call_3a_blocks_2e_0_23_1"
    assert "SequentialCell \u00d76" in browser.find_element(By.CSS_SELECTOR, f'g[id="{rollup}"]').text
    box = browser.execute_script(
        f"return String({EXPLORER}.model.items.length + {EXPLORER}.model.runs.findIndex(r => r.id === '{rollup}'))"
    )
    browser.find_element(By.CSS_SELECTOR, f'.ga-toggle[data-box="{box}"] circle').click()
    assert "laid out" in settle(browser)
    assert not browser.find_elements(By.CSS_SELECTOR, f'g[id="{rollup}"]')
    blocks = [f"ga-call_3a_blocks_2e_{k}_23_1" for k in range(6)]
    assert all(
        browser.find_elements(By.CSS_SELECTOR, f'g[id="{b}"].node') for b in blocks
    )  # six closed boxes
    assert browser.execute_script(f"return {EXPLORER}.buildDot()") == python_dot(report, browser, rollup=True)
    ActionChains(browser).double_click(
        browser.find_element(By.CSS_SELECTOR, f'g[id="{blocks[2]}"] text')
    ).perform()
    settle(browser)
    assert browser.find_elements(By.CSS_SELECTOR, f'g[id="{blocks[2]}"].cluster')  # opened where it was
    assert in_view(browser, "ga-call_3a_blocks_2e_2_2e_0_23_1")
    index = browser.execute_script(
        f"return String({EXPLORER}.model.items.findIndex(i => i.id === '{blocks[2]}'))"
    )
    browser.find_element(By.CSS_SELECTOR, f'.ga-toggle.ga-close[data-box="{index}"] circle').click()
    settle(browser)
    assert browser.find_elements(By.CSS_SELECTOR, f'g[id="{blocks[2]}"].node')  # closed again
    assert browser.execute_script(f"return {EXPLORER}.buildDot()") == python_dot(report, browser, rollup=True)


def test_searching_a_parameter_opens_and_selects_its_cell(browser: webdriver.Chrome, tmp_path: Path) -> None:
    report = graphaudit.audit(Stack(), inputs=tensor(1, 4))
    open_report(browser, report, tmp_path / "stack.html", rollup=True)
    search = browser.find_element(By.CSS_SELECTOR, ".ga-search")
    search.send_keys("blocks.3.0.weight")
    results = [li.text for li in browser.find_elements(By.CSS_SELECTOR, ".ga-results li")]
    assert results and results[0].startswith("blocks.3.0")
    search.send_keys(Keys.ENTER)
    assert settle(browser).startswith("found blocks.3.0")
    picked = browser.execute_script(
        f"return Array.from({APP}.querySelectorAll('g.ga-picked')).map(g => g.id)"
    )
    assert picked == ["ga-call_3a_blocks_2e_3_2e_0_23_1"] and in_view(browser, picked[0])
    details = browser.find_element(By.CSS_SELECTOR, ".ga-details").text
    assert "blocks.3.0.weight" in details and "Dense" in details and "trainable" in details


def test_filters_hide_rows_by_severity_and_check(browser: webdriver.Chrome, tmp_path: Path) -> None:
    report = evil_report()  # errors of GA105 and GA201
    open_report(browser, report, tmp_path / "evil.html")
    rows = browser.find_elements(By.CSS_SELECTOR, "tr.ga-finding")
    checks = [r.get_attribute("data-check") for r in rows]
    assert {"GA105", "GA201"} <= set(checks)
    Select(browser.find_element(By.CSS_SELECTOR, ".ga-check-filter")).select_by_value("GA201")
    assert [r.is_displayed() for r in rows] == [c == "GA201" for c in checks]
    assert browser.find_element(By.CSS_SELECTOR, ".ga-shown").text == str(checks.count("GA201"))
    dimmed = browser.execute_script(
        f"return {APP}.querySelector('g[id=\"ga-param_3a_weight\"]').classList.contains('ga-dim')"
    )
    assert dimmed  # the GA105-only node fades while GA201 is selected
    Select(browser.find_element(By.CSS_SELECTOR, ".ga-check-filter")).select_by_value("")
    assert all(r.is_displayed() for r in rows)
    browser.find_element(By.CSS_SELECTOR, "input.ga-severity-filter[value='error']").click()
    errors = [r.get_attribute("data-severity") == "error" for r in rows]
    assert [r.is_displayed() for r in rows] == [not e for e in errors]
    assert browser.find_element(By.CSS_SELECTOR, ".ga-shown").text == str(errors.count(False))


def _texts(driver: webdriver.Chrome) -> list[str]:
    return driver.execute_script(
        f"return Array.from({APP}.querySelectorAll('.ga-canvas text')).map(t => t.textContent)"
    )


def _nothing_ran(driver: webdriver.Chrome) -> None:
    assert no_alert(driver)
    assert driver.execute_script("return document.scripts.length") == 3  # the model, the engine, the explorer
    assert driver.execute_script("return document.images.length") == 0
    assert (
        driver.execute_script(
            f"return {APP}.querySelectorAll('svg script, svg foreignObject, svg img').length"
        )
        == 0
    )


def test_hostile_names_stay_text_in_every_view(browser: webdriver.Chrome, tmp_path: Path) -> None:
    report = evil_report()
    open_report(browser, report, tmp_path / "evil.html")
    _nothing_ran(browser)
    assert f"heads.{EVIL_KEY}" in _texts(browser) and EVIL_PARAM in _texts(browser)
    assert EVIL_KEY in browser.find_element(By.CSS_SELECTOR, ".ga-findings").text  # shown literally, as text
    root = browser.execute_script(f"return String({EXPLORER}.model.items.findIndex(i => i.k === 'call:#1'))")
    for _ in range(2):  # close the network, then open it again: two views laid out in the page
        browser.find_element(By.CSS_SELECTOR, f'.ga-toggle[data-box="{root}"] circle').click()
        assert "laid out" in settle(browser)
        _nothing_ran(browser)
    texts = _texts(browser)
    assert f"heads.{EVIL_KEY}" in texts and EVIL_PARAM in texts
    assert any('heads.a"b\\n\\nc&lt;{x} -> y;' in t for t in texts)  # quote, escapes, entity and DOT syntax
    assert browser.execute_script(f"return {EXPLORER}.buildDot()") == python_dot(report, browser)
    search = browser.find_element(By.CSS_SELECTOR, ".ga-search")
    search.send_keys("<script>")
    assert browser.find_element(By.CSS_SELECTOR, ".ga-results li").text.startswith(f"heads.{EVIL_KEY}")
    search.send_keys(Keys.ENTER)
    settle(browser)
    assert browser.find_element(By.CSS_SELECTOR, ".ga-details h3").text == f"heads.{EVIL_KEY}"
    click_row(browser, "GA201")
    _nothing_ran(browser)
    hostile = graphaudit.Report(
        [], graphaudit.to_networkx(Hostile()), network="Hostile"
    )  # the structure view
    open_report(browser, hostile, tmp_path / "hostile.html")
    browser.find_element(By.CSS_SELECTOR, '.ga-toggle[data-box="0"] circle').click()
    settle(browser)
    browser.find_element(By.CSS_SELECTOR, '.ga-toggle[data-box="0"] circle').click()
    assert "laid out" in settle(browser)
    _nothing_ran(browser)
    assert {EVIL_KEY, "tail\\", 'a"b\\n\\nc&lt;{x} -> y;'} <= set(_texts(browser))


def test_a_data_pipeline_has_a_tab_and_its_findings_open_it(
    browser: webdriver.Chrome, tmp_path: Path
) -> None:
    ds = pytest.importorskip("mindspore.dataset")
    x = np.random.default_rng(0).random((64, 4)).astype(np.float32)
    train = ds.NumpySlicesDataset({"x": x, "label": np.arange(64) % 2}, shuffle=False).batch(8)
    report = graphaudit.audit_dataset(train)  # no network: the page opens on the pipeline
    open_report(browser, report, tmp_path / "data.html")
    tab = browser.find_element(By.CSS_SELECTOR, '.ga-tab[data-panel="0"]')
    assert tab.text == "data pipeline 'train'" and "ga-tab-on" in tab.get_attribute("class")
    legend = browser.find_element(By.CSS_SELECTOR, ".ga-legend")
    assert not legend.is_displayed()  # the legend is the network's, not the pipeline's
    browser.find_element(By.CSS_SELECTOR, '.ga-tab[data-panel=""]').click()  # to the (empty) network
    assert not browser.find_element(By.CSS_SELECTOR, ".ga-canvas.ga-panel").is_displayed()
    assert legend.is_displayed()
    click_row(browser, "GA001")  # back to the pipeline, its source highlighted and in view
    panel = browser.find_element(By.CSS_SELECTOR, ".ga-canvas.ga-panel")
    assert panel.is_displayed() and "ga-tab-on" in tab.get_attribute("class")
    marked = browser.find_elements(By.CSS_SELECTOR, ".ga-canvas.ga-panel g.ga-hl")
    assert [g.get_attribute("id") for g in marked] == ["ga-ds_3a_train_2f_NumpySlicesDataset_23_1"]
    rect, canvas = marked[0].rect, panel.rect
    assert canvas["x"] <= rect["x"] and rect["x"] + rect["width"] <= canvas["x"] + canvas["width"] + 1
    assert canvas["y"] <= rect["y"] and rect["y"] + rect["height"] <= canvas["y"] + canvas["height"] + 1


class Wide(nn.Cell):
    """Twenty-four heads read the same input: a rank of 24 boxes, a drawing wider than the window."""

    def __init__(self) -> None:
        super().__init__()
        self.heads = nn.CellList([nn.Dense(4, 4) for _ in range(24)])

    def construct(self, x: Tensor) -> Tensor:
        out = self.heads[0](x)
        for head in self.heads[1:]:
            out = out + head(x)
        return out


def test_fit_shows_the_whole_drawing_and_the_legend_stays(browser: webdriver.Chrome, tmp_path: Path) -> None:
    open_report(browser, graphaudit.audit(Wide(), inputs=tensor(1, 4)), tmp_path / "wide.html")
    browser.find_element(By.CSS_SELECTOR, ".ga-fit").click()
    box = browser.execute_script(
        f"""
        const app = {APP}, canvas = app.querySelector('.ga-canvas.ga-network');
        const span = (el) => {{ const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; }};
        return {{canvas: span(canvas), graph: span(canvas.querySelector('g.graph')),
                legend: span(app.querySelector('.ga-legend')), window: [innerWidth, innerHeight]}};
        """
    )
    (cl, ct, cr, cb), (gl, gt, gr, gb) = box["canvas"], box["graph"]
    assert cl <= gl and gr <= cr + 1 and ct <= gt and gb <= cb + 1  # all of it in view
    assert box["legend"][2] <= box["window"][0] and box["legend"][0] >= 0  # the legend beside it
    assert "input / output" in browser.find_element(By.CSS_SELECTOR, ".ga-legend").text


def test_the_header_says_what_did_not_run_and_why(browser: webdriver.Chrome, tmp_path: Path) -> None:
    report = evil_report()
    open_report(browser, report, tmp_path / "evil.html")
    assert browser.find_element(By.CSS_SELECTOR, ".ga-summary").text.startswith("FAILED: 2 errors, ")
    browser.find_element(By.CSS_SELECTOR, ".ga-not-run summary").click()
    items = [li.text for li in browser.find_elements(By.CSS_SELECTOR, ".ga-not-run li")]
    assert items == [n.text() for n in report.not_run]


def _strokes(driver: webdriver.Chrome, element_id: str) -> list[str]:
    """The stroke colours of the outline(s) of drawn box *element_id* in the network's canvas."""
    return driver.execute_script(
        """
        const g = document.querySelector('.ga-canvas.ga-network g[id="' + arguments[0] + '"]');
        return Array.from(g.querySelectorAll(':scope > path, :scope > polygon, :scope > g > a > path,'
          + ' :scope > g > a > polygon')).map(p => p.getAttribute('stroke'));
        """,
        element_id,
    )


def test_the_first_view_frames_the_flagged_boxes_and_colours_only_them(
    browser: webdriver.Chrome, tmp_path: Path, out: Path
) -> None:
    report = nested_report()  # GA201 about the head, drawn below three tall nested blocks
    open_report(browser, report, tmp_path / "nested.html")
    head = "ga-call_3a_head_23_1"
    assert in_view(browser, head)  # the first view opens on what is flagged
    browser.save_screenshot(str(out / "nested-first-view.png"))
    assert "[GA201]" in browser.find_element(By.CSS_SELECTOR, f'g[id="{head}"]').text
    assert set(_strokes(browser, head)) == {"#d55e00"}
    assert set(_strokes(browser, "ga-call_3a__23_1")) == {"#9aa5b1"}  # the network around it: plain
    assert "the finding you clicked" not in browser.find_element(By.CSS_SELECTOR, ".ga-legend").text
    click_row(browser, "GA201")
    assert "the finding you clicked" in browser.find_element(By.CSS_SELECTOR, ".ga-legend").text
    clean = graphaudit.Report([], report.graph, network="Nested")  # nothing flagged: the whole network
    open_report(browser, clean, tmp_path / "clean.html")
    box = browser.execute_script(
        f"""
        const canvas = {APP}.querySelector('.ga-canvas.ga-network'), g = canvas.querySelector('g.graph');
        const r = g.getBoundingClientRect(), c = canvas.getBoundingClientRect();
        return [r.left - c.left, r.top - c.top, c.right - r.right, c.bottom - r.bottom];
        """
    )
    assert min(box) >= -1, box
    legend = browser.find_element(By.CSS_SELECTOR, ".ga-legend").text
    assert "finding" not in legend and "operation" not in legend  # only what this view draws


def test_the_findings_panel_resizes_and_its_messages_wrap(
    browser: webdriver.Chrome, tmp_path: Path, out: Path
) -> None:
    open_report(browser, nested_report(), tmp_path / "nested.html")
    side = browser.find_element(By.CSS_SELECTOR, ".ga-side")
    splitter = browser.find_element(By.CSS_SELECTOR, ".ga-splitter")
    before = side.rect["width"]
    ActionChains(browser).click_and_hold(splitter).move_by_offset(-250, 0).release().perform()
    assert abs(side.rect["width"] - before - 250) <= 8, (before, side.rect["width"])
    splitter.send_keys(Keys.ARROW_RIGHT)  # and back a little from the keyboard
    assert abs(side.rect["width"] - before - 210) <= 8
    canvas = browser.find_element(By.CSS_SELECTOR, ".ga-canvas.ga-network").rect
    assert canvas["x"] + canvas["width"] <= side.rect["x"]  # the drawing gave it the room
    wrapped = browser.execute_script(
        f"""
        const wrap = {APP}.querySelector('.ga-table-wrap'), cell = wrap.querySelector('td.ga-message');
        const line = parseFloat(getComputedStyle(cell).lineHeight) || 18;
        return [wrap.scrollWidth <= wrap.clientWidth, cell.scrollWidth <= cell.clientWidth,
                cell.getBoundingClientRect().height > 1.5 * line];
        """
    )
    assert wrapped == [True, True, True]  # the message wraps over lines, nothing scrolls sideways
    browser.save_screenshot(str(out / "nested-wide-panel.png"))


# --- large networks (slow) ---------------------------------------------------------------------------


def _resnet50() -> graphaudit.Report:
    mindcv = pytest.importorskip("mindcv")
    net = mindcv.create_model("resnet50", pretrained=False)
    optimizer = nn.Momentum(
        net.trainable_params()[:-2], learning_rate=0.01, momentum=0.9
    )  # classifier left out
    x = Tensor(np.random.default_rng(0).random((1, 3, 64, 64), dtype=np.float32))
    return graphaudit.audit(net, optimizer, inputs=x)


def _transformer24() -> graphaudit.Report:
    encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(64, 4, 128, batch_first=True), num_layers=24)
    x = Tensor(np.random.default_rng(0).random((2, 8, 64), dtype=np.float32))
    return graphaudit.audit(encoder, nn.Adam(encoder.trainable_params()), inputs=x)


def _cells5051() -> graphaudit.Report:
    graph = graphaudit.to_networkx(
        big_net(), inputs=Tensor(np.ones((1, 4), np.float32))
    )  # traced: 15,104 nodes
    return graphaudit.Report([], graph, network="Big")


@pytest.mark.slow
@pytest.mark.parametrize(
    "build", [_resnet50, _transformer24, _cells5051], ids=["resnet50", "transformer24", "cells5051"]
)
def test_a_large_network_opens_collapsed_and_expands_in_the_page(
    build: Any, browser: webdriver.Chrome, tmp_path: Path, out: Path
) -> None:
    report = build()
    path = tmp_path / "large.html"
    seconds = open_report(browser, report, path)
    ready = browser.execute_script(f"return Number({APP}.getAttribute('data-ready-ms'))")
    drawn = browser.execute_script(
        f"return {APP}.querySelectorAll('.ga-canvas g.node, .ga-canvas g.cluster').length"
    )
    assert 3 <= drawn <= 60  # collapsed: the times are recorded below, not asserted (see benchmarks/)
    toggles = browser.find_elements(By.CSS_SELECTOR, ".ga-toggle.ga-open circle")
    assert toggles  # something to open
    target = toggles[len(toggles) // 2]
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", target)
    start = time.perf_counter()
    browser.execute_script("arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true}))", target)
    status = settle(browser)
    expand = time.perf_counter() - start
    assert "laid out" in status
    after = browser.execute_script(
        f"return {APP}.querySelectorAll('.ga-canvas g.node, .ga-canvas g.cluster').length"
    )
    assert after > drawn
    assert browser.execute_script(f"return {EXPLORER}.buildDot()") == python_dot(report, browser)
    timings = out / "explorer-timings.json"
    found = json.loads(timings.read_text()) if timings.exists() else {}
    found[report.network] = {
        "html_kib": round(path.stat().st_size / 1024),
        "open_s": round(seconds, 3),
        "ready_ms": ready,
        "first_view_nodes": drawn,
        "expand_s": round(expand, 3),
        "layout_ms": int(browser.execute_script(f"return Number({APP}.getAttribute('data-layout-ms'))")),
        "after_nodes": after,
    }
    timings.write_text(json.dumps(found, indent=2))


def test_a_ports_comparison_is_coloured_in_every_view_and_its_table_is_beside_the_graph(
    browser: webdriver.Chrome, tmp_path: Path
) -> None:
    """The planted softmax-axis port against its original: the first view and a view laid out in the page."""
    from reference_ports import TinyTransformer
    from reference_ports import audit as audit_port

    from graphaudit.report.render import divergence_of

    report = audit_port(TinyTransformer("softmax-axis"), "attention")
    open_report(browser, report, tmp_path / "port.html")
    first = browser.execute_script(
        f"return Array.from({APP}.querySelectorAll('.ga-canvas g.ga-ref-first')).map(g => g.id)"
    )
    assert first == ["ga-call_3a_attn_2e_softmax_23_1"]
    side = browser.find_element(By.CSS_SELECTOR, ".ga-side .ga-reference")
    assert side.is_displayed() and "First divergence: the output of attn.softmax (call 1)" in side.text
    rows = browser.find_elements(By.CSS_SELECTOR, ".ga-reference table.ga-ref-calls tbody tr")
    assert len(rows) == len(report.reference["cells"])
    attn = "ga-call_3a_attn_23_1"
    index = browser.execute_script(f"return String({EXPLORER}.model.items.findIndex(i => i.id === '{attn}'))")
    toggle = browser.find_element(By.CSS_SELECTOR, f'.ga-toggle.ga-close[data-box="{index}"] circle')
    browser.execute_script("arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true}))", toggle)
    assert "laid out" in settle(browser)  # by Graphviz in the page, from the model's attribute lists
    closed = browser.find_element(By.CSS_SELECTOR, f'g[id="{attn}"].node')
    assert "ga-ref-diverges" in closed.get_attribute("class").split()
    assert browser.execute_script(f"return {EXPLORER}.buildDot()") == python_dot(
        report, browser, reference=divergence_of(report)
    )
