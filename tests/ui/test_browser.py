"""The web app in a real headless Chromium (Debian's ``chromium`` and ``chromium-driver``).

The first test protects the shipped business survey the way docs/ui.md tells a person to,
and checks the downloaded publishable file against the API's own result for the same
choices; the second cancels a long optimal suppression and checks its worker stopped; the
others check what the page says when a rule is refused, how it reads a CSV file saved by a
German spreadsheet, that Back comes back to the same session, and that a file chosen
before the page has its session is read.
With ``TABSDC_UI_SCREENSHOTS=<folder>`` the first test saves a screenshot of every step
there (``docs/ui.md`` shows them).
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import pandas as pd
import pytest

from tests.ui.conftest import DIMS, LEVELS, SURVEY
from tests.ui.test_session import gone

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")

if not CHROMIUM.exists():
    pytest.skip("the browser tests need Debian's chromium at /usr/bin/chromium "
                "(apt-get install chromium chromium-driver)", allow_module_level=True)
webdriver = pytest.importorskip("selenium.webdriver", reason="the browser tests need selenium")

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--window-size=1280,1000"]


@pytest.fixture
def browser(tmp_path):
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in [*FLAGS, f"--user-data-dir={tmp_path / 'profile'}"]:
        options.add_argument(flag)
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    options.add_experimental_option("prefs", {
        "download.default_directory": str(downloads), "download.prompt_for_download": False})
    driver = webdriver.Chrome(options=options,
                              service=webdriver.ChromeService(str(CHROMEDRIVER)))
    driver.downloads = downloads
    yield driver
    driver.quit()


def wait_for(driver, condition, timeout: float = 60):
    return WebDriverWait(driver, timeout, poll_frequency=0.1).until(lambda d: condition(d))


def text(driver, element_id: str) -> str:
    return driver.find_element(By.ID, element_id).text


def click(driver, element_id: str) -> None:
    driver.find_element(By.ID, element_id).click()


def shoot(driver, name: str | None) -> None:
    """Save the whole page as ``ui_<name>.png`` when screenshots are asked for."""
    folder = os.environ.get("TABSDC_UI_SCREENSHOTS")
    if folder and name:
        size = driver.execute_cdp_cmd("Page.getLayoutMetrics", {})["cssContentSize"]
        clip = {"x": 0, "y": 0, "width": size["width"], "height": min(size["height"], 2400),
                "scale": 1}
        shot = driver.execute_cdp_cmd("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True, "clip": clip})
        Path(folder, f"ui_{name}.png").write_bytes(base64.b64decode(shot["data"]))


def written(value: float) -> str:
    """A number as the page writes it: thousands separated by commas, to the unit and
    up to six decimals."""
    return f"{value:,.6f}".rstrip("0").rstrip(".")


def running_for(state: str) -> float:
    """Seconds shown by a running job's state, ``running (2.5 s)``; 0 otherwise."""
    return float(state.split("(")[1].split()[0]) if state.startswith("running (") else 0.0


#: A smaller table (144 cells) for the walks whose point does not need the whole survey (its
#: primaries are the same for p = 10 and p = 30).
SMALL = (["A21", "NUTS2"], {"A21": ["A10"], "NUTS2": ["NUTS1"]})


def choose_table(driver, dims, levels, screenshots: bool = False) -> None:
    """Steps 1 and 2: upload the survey, choose dimensions, response and hierarchies."""
    driver.find_element(By.ID, "data-file").send_keys(str(SURVEY))
    wait_for(driver, lambda d: "9786 rows" in text(d, "data-msg"))
    for dim in dims:
        click(driver, f"dim-{dim}")
    Select(driver.find_element(By.ID, "data-value")).select_by_value("TURNOVER")
    shoot(driver, screenshots and "1_data")
    click(driver, "data-next")
    for dim in dims:
        Select(driver.find_element(By.ID, f"h-kind-{dim}")).select_by_value("levels")
        driver.find_element(By.ID, f"h-levels-{dim}").send_keys(", ".join(levels[dim]))
    click(driver, "build-table")
    wait_for(driver, lambda d: "cells" in text(d, "table-summary"))
    total = pd.read_csv(SURVEY)["TURNOVER"].sum()
    label = driver.find_element(By.CSS_SELECTOR, "#trees > details > summary").text
    assert label.startswith(f"Total (9,786 contributors, value {written(total)})")
    codes = [e.text.split(" (")[0] for e in driver.find_elements(
        By.CSS_SELECTOR, "#trees > details:first-of-type > details > summary")]
    assert codes == sorted(codes)  # sorted, whatever the order of the data
    branch = driver.find_element(By.CSS_SELECTOR, "#trees details details")
    assert not branch.find_element(By.CSS_SELECTOR, ".leaf, details").is_displayed()
    branch.find_element(By.TAG_NAME, "summary").click()  # the tree folds open
    assert branch.find_element(By.CSS_SELECTOR, ".leaf, details").is_displayed()
    shoot(driver, screenshots and "2_hierarchies")
    click(driver, "hier-next")


@pytest.mark.slow
def test_protect_the_business_survey_in_the_browser(served, browser, api_ruled,
                                                    api_publishable):
    browser.get(served.url)
    choose_table(browser, DIMS, LEVELS, screenshots=True)
    expected_primaries = str(int((api_ruled.cells["status"] == "u").sum()))
    wait_for(browser, lambda d: text(d, "primary-count") == expected_primaries)
    # the count follows the parameters: a stricter p gives more primaries
    p = browser.find_element(By.ID, "rule-p")
    p.clear()
    p.send_keys("30")
    wait_for(browser, lambda d: text(d, "primary-count") not in ("...", expected_primaries))
    assert int(text(browser, "primary-count")) > int(expected_primaries)
    p.clear()
    p.send_keys("10")
    wait_for(browser, lambda d: text(d, "primary-count") == expected_primaries)
    wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#rules-map td.st-u"))
    assert len(browser.find_elements(By.CSS_SELECTOR, "#rules-map td.st-u")) == int(
        (api_ruled.pivot("A88", "NUTS2", "status") == "u").sum().sum())
    shoot(browser, "3_rules")
    click(browser, "rules-next")
    Select(browser.find_element(By.ID, "s-algorithm")).select_by_value("optimal")
    Select(browser.find_element(By.ID, "s-cost")).select_by_value("value")
    click(browser, "protect-run")
    wait_for(browser, lambda d: text(d, "job-state").startswith("done"), timeout=120)
    assert "round" in text(browser, "job-log")
    assert text(browser, "job-log").startswith("optimal: ")
    assert browser.execute_script(  # the log shows its last line
        "const log = document.getElementById('job-log');"
        "return log.scrollHeight - log.scrollTop - log.clientHeight;") <= 2
    shoot(browser, "4_protect")
    click(browser, "nav-check")
    wait_for(browser, lambda d: text(d, "check-verdict"))
    assert text(browser, "check-verdict") == "every primary cell is protected"
    assert "status optimal" in text(browser, "check-summary")
    rows = browser.find_elements(By.CSS_SELECTOR, "#check-table tbody tr")
    assert len(rows) > int(expected_primaries)
    attack_q = browser.find_element(By.ID, "attack-q")
    attack_q.clear()
    attack_q.send_keys("20")
    click(browser, "attack-run")
    wait_for(browser, lambda d: "every value known within q = 20" in text(d, "attack-summary"))
    explanation = text(browser, "attack-explanation")
    assert "The verdict at the top is for publishing the table" in explanation
    assert f"of the {expected_primaries} primary cells keep the protection" in explanation
    assert browser.find_element(By.ID, "check-legend").is_displayed()
    header = [th.text for th in browser.find_elements(By.CSS_SELECTOR, "#check-table th")]
    statuses = {row.find_elements(By.TAG_NAME, "td")[header.index("status")].text for row in
                browser.find_elements(By.CSS_SELECTOR, "#check-table tbody tr")}
    assert statuses == {"primary (sensitive)", "secondary (hidden)"}
    shoot(browser, "5_check")
    click(browser, "nav-download")
    wait_for(browser, lambda d: text(d, "download-msg").startswith("Suppression (optimal)"))
    shoot(browser, "6_download")
    wait_for(browser, lambda d: "suppress(table, 'optimal', 'value', time_limit=60.0)" in
             d.find_element(By.ID, "script-text").get_attribute("value"))
    assert text(browser, "script-name") == "business_survey_protect.py"
    click(browser, "dl-publishable")
    target = browser.downloads / "business_survey_publishable.csv"
    wait_for(browser, lambda d: target.exists() and target.read_bytes() == api_publishable,
             timeout=30)
    click(browser, "dl-notebook")  # a browser keeps a notebook (it may refuse a .py file)
    notebook = browser.downloads / "business_survey_protect.ipynb"
    wait_for(browser, lambda d: notebook.exists() and notebook.stat().st_size > 0, timeout=30)
    cells = json.loads(notebook.read_text())["cells"]
    assert "".join("".join(c["source"]) for c in cells[1:]).count("suppress(table") == 1


def test_cancel_stops_the_worker(served, browser):
    browser.get(served.url)
    levels = {"A88": ["A10", "A21"], "NUTS3": ["NUTS1", "NUTS2"]}
    choose_table(browser, ["A88", "NUTS3"], levels)
    wait_for(browser, lambda d: text(d, "primary-count").isdigit())
    click(browser, "rules-next")
    Select(browser.find_element(By.ID, "s-algorithm")).select_by_value("optimal")
    time_limit = browser.find_element(By.ID, "s-time")
    time_limit.clear()
    time_limit.send_keys("600")
    click(browser, "protect-run")
    wait_for(browser, lambda d: text(d, "job-state").startswith("running"))
    session = served.sessions[browser.find_element(By.TAG_NAME, "body")
                              .get_attribute("data-session")]
    pid = session.job.pid
    assert Path(f"/proc/{pid}").exists()
    # two seconds into a run of about a minute: the worker is building and solving
    wait_for(browser, lambda d: running_for(text(d, "job-state")) >= 2)
    assert session.job.process.is_alive()
    click(browser, "cancel")
    wait_for(browser, lambda d: text(d, "job-state").startswith("cancelled"))
    assert gone(pid)
    assert session.protection is None
    click(browser, "nav-check")
    wait_for(browser, lambda d: "protect the table first" in text(d, "check-msg"))
    click(browser, "nav-download")
    wait_for(browser, lambda d: "protect the table first" in text(d, "download-msg"))
    assert not browser.find_element(By.ID, "dl-publishable").is_displayed()


def test_a_refused_rule_clears_the_counts_and_blocks_protection(served, browser):
    browser.get(served.url)
    choose_table(browser, *SMALL)
    wait_for(browser, lambda d: text(d, "primary-count").isdigit())
    assert browser.find_elements(By.CSS_SELECTOR, "#rules-map td")
    p = browser.find_element(By.ID, "rule-p")
    p.clear()
    p.send_keys("110")
    wait_for(browser, lambda d: "p % rule needs 0 < p <= 100" in text(d, "rules-msg"))
    assert text(browser, "primary-count") == "-" and text(browser, "per-rule") == ""
    assert not browser.find_elements(By.CSS_SELECTOR, "#rules-map td")
    click(browser, "rules-next")
    Select(browser.find_element(By.ID, "s-algorithm")).select_by_value("heuristic")
    click(browser, "protect-run")
    wait_for(browser, lambda d: text(d, "protect-msg").startswith("the rules are not valid"))
    click(browser, "nav-rules")
    p.clear()
    p.send_keys("10")
    wait_for(browser, lambda d: text(d, "primary-count").isdigit())
    click(browser, "rules-next")
    click(browser, "protect-run")
    wait_for(browser, lambda d: text(d, "job-state").startswith("done"), timeout=120)


def test_a_csv_from_a_german_spreadsheet(served, browser, tmp_path):
    path = tmp_path / "umsatz.csv"
    path.write_bytes(("Region;Größe;Umsatz\n" + "".join(
        f"{region};{size};{value}\n" for region, size, value in [
            ("Île-de-France", "klein", "1.234.567,50"), ("Bayern", "klein", "12,25"),
            ("Bayern", "groß", "0,75"), ("Bayern", " ", "2.000,00"),
            ("Île-de-France", "groß", "3,50")])).encode("cp1252"))
    browser.get(served.url)
    browser.find_element(By.ID, "data-file").send_keys(str(path))
    wait_for(browser, lambda d: "5 rows" in text(d, "data-msg"))
    assert text(browser, "data-read-as") == (
        "Read as: fields separated by semicolon, decimal comma, thousands separated by "
        "point, encoding Windows-1252 (Western European).")
    Select(browser.find_element(By.ID, "data-value")).select_by_value("Umsatz")
    click(browser, "dim-Größe")
    click(browser, "dim-Region")
    assert [e.text.split()[0] for e in browser.find_elements(By.CSS_SELECTOR, "#dim-order li")
            ] == ["Größe", "Region"]
    assert text(browser, "data-warnings").startswith(
        "Größe: 1 rows have a code of spaces only (the first on line 5); codes of spaces only "
        "form a category of their own")
    click(browser, "dim-up-Region")  # the order is chosen: Region first
    assert [e.text.split()[0] for e in browser.find_elements(By.CSS_SELECTOR, "#dim-order li")
            ] == ["Region", "Größe"]
    click(browser, "data-next")
    click(browser, "build-table")
    wait_for(browser, lambda d: "cells" in text(d, "table-summary"))
    assert text(browser, "table-summary").endswith("(Region x Größe)")
    assert "form a category of their own" in text(browser, "table-warnings")
    label = browser.find_element(By.CSS_SELECTOR, "#trees > details > summary").text
    assert label.startswith("Total (5 contributors, value 1,236,584)")
    leaves = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#trees .leaf")]
    assert leaves[:2] == ["Bayern (3 contributors, value 2,013)",
                          "Île-de-France (2 contributors, value 1,234,571)"]
    assert leaves[2] == "(blank) (1 contributors, value 2,000)"


def test_back_comes_back_to_the_same_session(served, browser):
    browser.get(served.url)
    choose_table(browser, DIMS, LEVELS)  # p = 30 has more primaries than p = 10 here
    wait_for(browser, lambda d: text(d, "primary-count").isdigit())
    first = text(browser, "primary-count")
    sid = browser.find_element(By.TAG_NAME, "body").get_attribute("data-session")
    browser.get(served.url + "/static/app.css")  # another page, then Back
    browser.back()
    wait_for(browser, lambda d: text(d, "primary-count") == first)
    assert browser.find_element(By.TAG_NAME, "body").get_attribute("data-session") == sid
    assert browser.find_element(By.ID, "step-rules").is_displayed()
    assert browser.find_elements(By.CSS_SELECTOR, "#rules-map td.st-u")
    p = browser.find_element(By.ID, "rule-p")
    p.clear()
    p.send_keys("30")  # every step still answers
    wait_for(browser, lambda d: text(d, "primary-count").isdigit()
             and text(d, "primary-count") != first)
    assert "session has ended" not in text(browser, "rules-msg")
    browser.refresh()  # a reload too
    wait_for(browser, lambda d: d.find_element(By.ID, "rule-p").get_attribute("value") == "30")
    assert browser.find_element(By.TAG_NAME, "body").get_attribute("data-session") == sid


def test_markup_in_a_column_name_stays_text(served, browser, tmp_path):
    name = '<img src="x" id="injected">r'
    path = tmp_path / "markup.csv"
    pd.DataFrame({name: ["a", "b", "a"], "v": [1, 2, 3]}).to_csv(path, index=False)
    browser.get(served.url)
    browser.find_element(By.ID, "data-file").send_keys(str(path))
    wait_for(browser, lambda d: "3 rows" in text(d, "data-msg"))
    browser.execute_script("document.getElementById(arguments[0]).click()", f"dim-{name}")
    click(browser, "data-next")
    assert browser.find_element(By.CSS_SELECTOR, "#hier-dims b").text == name
    assert not browser.find_elements(By.ID, "injected")
    click(browser, "build-table")
    wait_for(browser, lambda d: "cells" in text(d, "table-summary"))
    assert text(browser, "table-summary").endswith(f"({name})")


def test_a_file_chosen_while_the_page_starts_is_read(served, browser, tmp_path):
    """The page asks the server for a session before it listens to the file chooser; a
    file chosen in that time is read once the session is there (it was lost before)."""
    path = tmp_path / "early.csv"
    pd.DataFrame({"r": ["a", "b", "a", "c"], "v": [1, 2, 3, 4]}).to_csv(path, index=False)
    browser.execute_cdp_cmd("Network.enable", {})
    browser.execute_cdp_cmd("Network.emulateNetworkConditions", {
        "offline": False, "latency": 1500, "downloadThroughput": -1, "uploadThroughput": -1})
    browser.get(served.url)
    assert browser.find_element(By.TAG_NAME, "body").get_attribute("data-session") is None
    browser.find_element(By.ID, "data-file").send_keys(str(path))
    wait_for(browser, lambda d: "4 rows" in text(d, "data-msg"))
