"""The HTML report in a real headless Chromium: table, click-to-highlight, filters, no script injection.

Needs Debian's ``chromium`` and ``chromium-driver`` packages, the ``selenium`` Python package
and Graphviz's ``dot``; skipped when any is missing.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from mindspore import Tensor, nn
from nets import Repeated, tensor
from test_render import EVIL_KEY, EVIL_PARAM, evil_report

import graphaudit
from graphaudit.report.render import render_report

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"

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
from selenium.webdriver.common.by import By  # noqa: E402
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
    try:
        yield driver
    finally:
        driver.quit()


def open_report(driver: webdriver.Chrome, report: graphaudit.Report, path: Path) -> None:
    driver.get(render_report(report, path).resolve().as_uri())


def no_alert(driver: webdriver.Chrome) -> bool:
    try:
        driver.switch_to.alert  # noqa: B018
    except NoAlertPresentException:
        return True
    return False


def test_clicking_a_finding_highlights_its_nodes(browser: webdriver.Chrome, tmp_path: Path) -> None:
    report = graphaudit.audit(Repeated(), inputs=tensor(1, 4))
    open_report(browser, report, tmp_path / "repeated.html")
    rows = browser.find_elements(By.CSS_SELECTOR, "#ga-findings tr.ga-finding")
    assert len(rows) == len(report.findings) > 0
    row = next(r for r in rows if r.get_attribute("data-check") == "GA101")
    targets = row.get_attribute("data-targets").split()
    assert targets == ["ga-cell_3a_layers_2e_0", "ga-call_3a_layers_23_1"]
    highlighted = "return arguments[0].map(id => document.getElementById(id).classList.contains('ga-hl'));"
    assert browser.execute_script(highlighted, targets) == [False, False]
    row.click()
    assert browser.execute_script(highlighted, targets) == [True, True]
    assert "ga-selected" in row.get_attribute("class")
    # Clicking a flagged node in the graph selects its finding.
    browser.find_elements(By.CSS_SELECTOR, "#ga-findings tr.ga-finding")[-1].click()
    browser.execute_script(
        "document.getElementById(arguments[0]).dispatchEvent(new MouseEvent('click'))", targets[0]
    )
    assert "ga-selected" in row.get_attribute("class")


def test_filters_hide_rows_by_severity_and_check(browser: webdriver.Chrome, tmp_path: Path) -> None:
    report = evil_report()  # errors of GA105 and GA201
    open_report(browser, report, tmp_path / "evil.html")
    rows = browser.find_elements(By.CSS_SELECTOR, "#ga-findings tr.ga-finding")
    checks = [r.get_attribute("data-check") for r in rows]
    assert {"GA105", "GA201"} <= set(checks)
    Select(browser.find_element(By.ID, "ga-check-filter")).select_by_value("GA201")
    assert [r.is_displayed() for r in rows] == [c == "GA201" for c in checks]
    assert browser.find_element(By.ID, "ga-shown").text == str(checks.count("GA201"))
    dimmed = browser.execute_script(
        "return document.getElementById('ga-param_3a_weight').classList.contains('ga-dim')"
    )
    assert dimmed  # the GA105-only node fades while GA201 is selected
    Select(browser.find_element(By.ID, "ga-check-filter")).select_by_value("")
    assert all(r.is_displayed() for r in rows)
    browser.find_element(By.CSS_SELECTOR, "input.ga-severity-filter[value='error']").click()
    errors = [r.get_attribute("data-severity") == "error" for r in rows]
    assert [r.is_displayed() for r in rows] == [not e for e in errors]
    assert browser.find_element(By.ID, "ga-shown").text == str(errors.count(False))


def test_malicious_names_do_not_run_script(browser: webdriver.Chrome, tmp_path: Path) -> None:
    open_report(browser, evil_report(), tmp_path / "evil.html")
    assert no_alert(browser)
    assert browser.execute_script("return document.scripts.length") == 1  # the report's own script
    assert browser.execute_script("return document.images.length") == 0
    svg_texts = browser.execute_script(
        "return Array.from(document.querySelectorAll('#ga-graph text')).map(t => t.textContent)"
    )
    assert f"heads.{EVIL_KEY}" in svg_texts and EVIL_PARAM in svg_texts
    table = browser.find_element(By.ID, "ga-findings").text
    assert EVIL_KEY in table  # shown literally, as text
    browser.find_elements(By.CSS_SELECTOR, "#ga-findings tr.ga-finding")[0].click()
    assert no_alert(browser)


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


def test_a_wide_graph_and_its_legend_are_within_reach(browser: webdriver.Chrome, tmp_path: Path) -> None:
    open_report(browser, graphaudit.audit(Wide(), inputs=tensor(1, 4)), tmp_path / "wide.html")
    box = browser.execute_script(
        """
        const panel = document.getElementById("ga-graph"), svg = panel.querySelector("svg");
        const span = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.right]; };
        const seen = {window: document.documentElement.clientWidth, panel: span(panel), svg: span(svg),
                      legend: span(document.getElementById("ga-legend"))};
        panel.scrollLeft = panel.scrollWidth;
        seen.scrolled = span(svg);
        return seen;
        """
    )
    assert box["svg"][1] - box["svg"][0] > box["window"]  # wider than the window: it must scroll
    assert box["svg"][0] >= box["panel"][0]  # its left side is not cut off
    assert box["legend"][0] >= 0 and box["legend"][1] <= box["window"]  # the legend is in view at once
    assert box["scrolled"][1] <= box["panel"][1] + 1  # and its right end can be scrolled to


def test_the_header_says_what_did_not_run_and_why(browser: webdriver.Chrome, tmp_path: Path) -> None:
    report = evil_report()
    open_report(browser, report, tmp_path / "evil.html")
    assert browser.find_element(By.CSS_SELECTOR, ".ga-summary").text.startswith("FAILED: 2 errors, ")
    browser.find_element(By.CSS_SELECTOR, ".ga-not-run summary").click()
    items = [li.text for li in browser.find_elements(By.CSS_SELECTOR, ".ga-not-run li")]
    assert items == [n.text() for n in report.not_run]
