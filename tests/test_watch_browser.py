"""The training dashboard in a real headless Chromium: the charts are there, the hits are marked.

A real run (a small MLP whose first layer is dead, and whose learning rate is too large for
the rest) is watched with ``out=``; the page is opened in Chromium through selenium (as
``tests/test_html_browser.py`` does), its charts are counted, hostile names stay text, and a
screenshot is saved for a reviewer in the ``out`` fixture's folder (``GRAPHAUDIT_TEST_OUT``,
else pytest's temporary folder: never the checkout).
Skipped without Debian's ``chromium``/``chromium-driver`` and the ``selenium`` package.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import mindspore as ms
import numpy as np
import pytest
from mindspore import Tensor, nn

import graphaudit

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        CHROMIUM is None or not Path(CHROMEDRIVER).exists(), reason="chromium is not installed"
    ),
]
webdriver = pytest.importorskip("selenium.webdriver")
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[webdriver.Chrome]:
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM  # type: ignore[assignment]
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--window-size=1000,1400",
        f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(16, 32, bias_init=Tensor(np.full(32, -50.0, np.float32)))  # never fires
        self.relu = nn.ReLU()
        self.side = nn.Dense(16, 4)
        self.head = nn.Dense(32, 4)

    def construct(self, x):
        return self.head(self.relu(self.fc(x))) + self.side(x)


@pytest.fixture(scope="module")
def watched(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    mode = ms.get_context("mode")
    ms.set_context(mode=ms.PYNATIVE_MODE)
    try:
        ms.set_seed(0)
        net = Net()
        optimizer = nn.SGD(net.trainable_params(), 0.1)
        rng = np.random.default_rng(0)
        x = rng.standard_normal((256, 16)).astype(np.float32)
        y = (x @ rng.standard_normal((16, 4))).argmax(1).astype(np.int32)
        data = ms.dataset.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(16)
        valid = ms.dataset.NumpySlicesDataset({"x": x[:64], "y": y[:64]}, shuffle=False).batch(32)
        out = tmp_path_factory.mktemp("dashboard")
        watch = graphaudit.Watch(
            every=2, fail_on="never", out=out, eval_dataset=valid, layers=["side.weight"]
        )
        ms.train.Model(net, nn.CrossEntropyLoss(), optimizer).train(
            2, data, callbacks=[watch], dataset_sink_mode=False
        )
    finally:
        ms.set_context(mode=mode)
    return out, watch


def test_the_dashboard_shows_the_run_in_a_browser(browser, watched, out):
    folder, watch = watched
    assert "GA960" in [f.check_id for f in watch.report.findings]
    browser.get((folder / "dashboard.html").resolve().as_uri())
    assert browser.find_elements(By.CSS_SELECTOR, "#loss polyline.train")
    assert len(browser.find_elements(By.CSS_SELECTOR, "#loss circle.valid")) == 2  # two epochs evaluated
    hits = browser.find_elements(By.CSS_SELECTOR, "#loss line.hit")
    assert hits and "GA960" in browser.find_element(By.ID, "loss").text
    parameters, samples = len(watch.record.parameters), len(watch.record.samples)
    assert len(browser.find_elements(By.CSS_SELECTOR, "#grad-heatmap rect.cell")) == parameters * samples
    assert len(browser.find_elements(By.CSS_SELECTOR, "#ratio-heatmap rect.cell")) == parameters * samples
    titles = [e.text for e in browser.find_elements(By.TAG_NAME, "h3")]
    assert "fc.weight" in titles and "side.weight" in titles  # named by GA960, and picked
    assert "GA960" in browser.find_element(By.ID, "findings").text
    assert browser.save_screenshot(str(out / "watch-dashboard.png"))


def test_the_samples_are_json_lines(watched):
    out, watch = watched
    lines = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    kinds = [line["kind"] for line in lines]
    assert kinds[0] == "run" and kinds.count("step") == watch.record.steps == 32
    assert kinds.count("sample") == len(watch.record.samples) and kinds.count("validation") == 2
    assert any(line["kind"] == "finding" and line["check_id"] == "GA960" for line in lines)
