"""A class room in a real headless browser (issue 48, point 7): a lecturer (1280 × 720) and two students on phones
(390 × 844, separate browser contexts) on one ``explorer serve --room-capacity 2``.

Both students draw and the lecturer's pooled count is the sum of theirs while the histogram moves; a student's page
has no control that changes the room and a forged lecturer link is refused; a question round trip (a word refused, a
number taken, the reveal); a wrong room code; the third student of a room of two; the CSV and the PNG; the
lecturer closes the room and the students' pages say so. No page asks another host for anything, and each refusal
is one line of the server's log. Screenshots of the projector and of a phone go to ``docs/screenshots/``.
"""

from __future__ import annotations

import csv
import io
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlparse

import pytest
from playwright.sync_api import expect

from tests.conftest import ARTIFACTS, console_errors, free_port, new_page, type_value, wait_for_http

pytestmark = pytest.mark.browser

SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
PHONE = {"width": 390, "height": 844}

#: The heights of the bars of the page's histograms (data sources with a column "top": shares of the draws per
#: bin), summed per source.
BARS_JS = """() => {
  const out = [];
  for (const doc of window.Bokeh.documents) {
    for (const model of doc.all_models) {
      if (model.type !== 'ColumnDataSource' && model.constructor.name !== 'ColumnDataSource') continue;
      const data = model.data;
      const top = data instanceof Map ? data.get('top') : data['top'];
      if (top) out.push(Array.from(top).reduce((a, b) => a + b, 0));
    }
  }
  return out;
}"""


@pytest.fixture(scope="module")
def served(browser):
    """``explorer serve --room-capacity 2`` on a free port: its URL and its log (a file)."""
    port = free_port()
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen([sys.executable, "-m", "explorer.cli", "serve", "--port", str(port), "--no-show",
                                 "--no-warm-up", "--room-capacity", "2"], stdout=log, stderr=subprocess.STDOUT,
                                env=env)
        url = f"http://127.0.0.1:{port}"
        wait_for_http(url + "/", proc, log=log)
        yield url, log
        proc.terminate()
        proc.wait(timeout=20)
        ARTIFACTS.mkdir(exist_ok=True)
        (ARTIFACTS / "classroom-server.log").write_text("\n".join(_log_lines(log)))


def _log_lines(log) -> list[str]:
    log.seek(0)
    return log.read().decode(errors="replace").splitlines()


def _offline(page, asked: list[str]) -> None:
    """Refuse (and note) every request of ``page`` to another host than this machine."""
    def external(url: str) -> bool:
        return urlparse(url).hostname not in ("127.0.0.1", "localhost", None) and not url.startswith("data:")

    page.route(external, lambda route: (asked.append(route.request.url), route.abort()))


def _phone(browser, url: str, asked: list[str]):
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True, device_scale_factor=2)
    page = context.new_page()
    page.set_default_timeout(120_000)
    _offline(page, asked)
    page.goto(url)
    return page


#: The text an element shows, its shadow root's too (a Panel pane draws its HTML there), without style sheets.
TEXT_JS = """(el) => {
  const text = (node) => node.nodeType === 3 ? node.textContent
    : ['STYLE', 'LINK', 'SCRIPT'].includes(node.nodeName) ? ''
    : [...(node.shadowRoot ? node.shadowRoot.childNodes : []), ...node.childNodes].map(text).join('');
  return text(el);
}"""


def _text(page, css: str) -> str:
    return page.locator(css).first.evaluate(TEXT_JS).strip()


def _wait_text(page, css: str, pattern: str, timeout: float = 60_000) -> str:
    """Wait until the text of ``css`` (through shadow roots) matches ``pattern``; return it."""
    locator = page.locator(css).first
    expect(locator).to_contain_text(re.compile(pattern), timeout=timeout)
    return locator.evaluate(TEXT_JS).strip()


def _count(page, css: str) -> int:
    return int(_text(page, css).replace(",", ""))


def test_a_lecturer_and_two_phones_draw_ask_reveal_export_and_close(browser, served):
    base, log = served
    asked: list[str] = []
    # the lecturer starts the room on the step-by-step page
    step = new_page(browser)
    _offline(step, asked)
    step.goto(base + "/")
    step.locator(".explorer-steps-class-room button").click()
    href = step.locator("a.explorer-class-open").get_attribute("href")
    assert re.fullmatch(r"\./lecture\?room=[\w-]{12}&key=[\w-]{22,}", href), href
    lecturer = new_page(browser)
    errors = console_errors(lecturer)
    _offline(lecturer, asked)
    lecturer.goto(base + href[1:])
    join = _wait_text(lecturer, ".explorer-class-join b", "class\\?room=")
    assert join == f"{base}/class?room={href.split('room=')[1].split('&')[0]}"
    assert lecturer.locator(".explorer-class-qr svg path").count() >= 1  # the QR code, drawn by the server
    _wait_text(lecturer, ".explorer-class-counts", "0 students joined")

    # two students on phones: both draw; the lecturer's count is the sum and the histogram moves
    alice, bob = _phone(browser, base + "/class?room=" + join.split("room=")[1], asked), None
    bob = _phone(browser, join, asked)
    _wait_text(lecturer, ".explorer-class-counts", "2 students joined")
    bars_before = sum(lecturer.evaluate(BARS_JS))
    alice.locator(".explorer-class-draw-10 button").click()
    _wait_text(alice, ".explorer-class-my-count", "^10$")
    for n in (1, 2, 3):
        bob.locator(".explorer-class-draw-1 button").click()
        _wait_text(bob, ".explorer-class-my-count", f"^{n}$")
    _wait_text(lecturer, ".explorer-class-pooled", "^13$", timeout=10_000)
    assert _count(alice, ".explorer-class-my-count") + _count(bob, ".explorer-class-my-count") == 13
    # the bars moved: empty before, the shares of the 13 pooled draws per bin (they add up to 1) after
    assert bars_before == 0 and sum(lecturer.evaluate(BARS_JS)) == pytest.approx(1.0)
    for phone in (alice, bob):
        assert phone.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]  # no horizontal scroll
        box = phone.locator(".explorer-class-draw-1 button").bounding_box()
        assert box["height"] >= 48 and box["width"] >= 300  # a large touch target
    assert "me=" in alice.url  # the student's key is in the link: a reload is the same student
    alice.reload()
    _wait_text(alice, ".explorer-class-my-count", "^10$")
    _wait_text(lecturer, ".explorer-class-counts", "2 students joined")

    # a student cannot change the room: no control on the phone, and a crafted lecturer link is refused
    for css in ("new-round", "ask", "reveal", "close", "csv", "s-over-n", "index", "menu"):
        assert alice.locator(f".explorer-class-{css}").count() == 0
    assert alice.locator("input[type=range], select").count() == 0
    forged = alice.context.new_page()
    forged.goto(base + href[1:].split("&key=")[0] + "&key=" + "A" * 22)
    assert "lecturer link is not valid" in _wait_text(forged, ".explorer-class-refused", "not valid")
    assert _count(lecturer, ".explorer-class-pooled") == 13
    assert "Round 1" in _text(lecturer, ".explorer-class-settings")

    # predict first: the lecturer asks, the students answer (a word is refused), the lecturer reveals
    lecturer.locator(".explorer-class-ask button").click()
    _wait_text(alice, ".explorer-class-question", "standard deviation")
    type_value(alice.locator(".explorer-class-answer input"), "about a half")
    alice.locator(".explorer-class-send button").click()
    _wait_text(alice, ".explorer-class-message", "Type a number")
    _wait_text(lecturer, ".explorer-class-question", "0 answers")
    for phone, answer in ((alice, "0.3"), (bob, "0.5")):
        type_value(phone.locator(".explorer-class-answer input"), answer)
        phone.locator(".explorer-class-send button").click()
        _wait_text(phone, ".explorer-class-message", f"Your answer {answer} was sent")
    _wait_text(lecturer, ".explorer-class-question", "2 answers")
    lecturer.locator(".explorer-class-reveal button").click()
    revealed = _wait_text(lecturer, ".explorer-class-question", "The theory")
    theory, pooled = map(float, re.findall(r"(?:theory, eq. \(60\)|pooled draws): ([\d.]+)", revealed))
    assert 0 < theory < 5 and 0 < pooled < 5
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    lecturer.screenshot(path=str(SCREENSHOTS / "classroom-projector.png"))
    alice.screenshot(path=str(SCREENSHOTS / "classroom-phone.png"))

    # a wrong room code, and the third student of a room of two
    wrong = _phone(browser, base + "/class?room=doesnotexist", asked)
    assert "no class room with the code" in _wait_text(wrong, ".explorer-class-refused", "no class room")
    third = _phone(browser, join, asked)
    assert "This room is full (2 students)" in _wait_text(third, ".explorer-class-refused", "full")
    _wait_text(lecturer, ".explorer-class-counts", "2 students joined")

    # the lecturer's exports: the round as CSV (every draw and answer) and the figure as PNG
    with lecturer.expect_download() as download:
        lecturer.locator(".explorer-class-csv").click()
    text = Path(download.value.path()).read_text()
    rows = list(csv.DictReader(io.StringIO("\n".join(x for x in text.splitlines() if not x.startswith("#")))))
    assert sum(r["record"] == "draw" for r in rows) == 13 and sum(r["record"] == "answer" for r in rows) == 2
    with lecturer.expect_download() as download:
        lecturer.locator(".bk-tool-icon-save").first.click()  # the class figure's toolbar
    assert Path(download.value.path()).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    # the lecturer closes the room: the students see it
    lecturer.locator(".explorer-class-close button").click()
    for phone in (alice, bob):
        _wait_text(phone, ".explorer-class-closed", "The room was closed")
    assert asked == []  # nothing from another host
    assert errors == []
    lines = _log_lines(log)
    refusals = [line for line in lines if "class room: refused" in line]
    assert len(refusals) == 4, refusals  # forged token, a word for a number, an unknown code, the third student
    assert not [line for line in lines if "Traceback" in line]
