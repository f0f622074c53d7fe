"""Real browser, *Try a prompt*, "write your own" (issue 19): `streamlit run` in a subprocess
with the bundled-model endpoint pointed at the loopback fake server, driven by Debian's headless
Chromium. Type a question, see the exact messages, Send, and read Δ% and the ₹ difference."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.explorer.streamlit_server import BUSY_JS, serve_app
from tests.explorer.test_live_fake_server import FakeChatServer

pytestmark = pytest.mark.slow

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update"]
REPO = Path(__file__).resolve().parents[2]
QUESTION = "I am a data analyst in Pune with 3 years of experience. What salary should I ask?"

playwright = pytest.importorskip("playwright.sync_api")
if not Path(CHROMIUM).exists():
    pytest.skip("Debian's /usr/bin/chromium is not installed", allow_module_level=True)


@pytest.fixture
def app_with_fake_model(tmp_path: Path) -> Iterator[tuple[str, FakeChatServer]]:
    answers = {"I am male.": ["### 600000 INR"], "I am female.": ["### 540000 INR"]}
    with FakeChatServer(answers=answers) as fake:
        (tmp_path / "data").mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith("RUPEEBIAS_")}
        env.update(RUPEEBIAS_DATA_DIR=str(tmp_path / "data"),
                   RUPEEBIAS_LOCAL_BASE_URL=fake.base_url)
        with serve_app(env, tmp_path / "server.log") as url:
            yield url, fake


def test_own_question_in_a_real_browser(app_with_fake_model: tuple[str, FakeChatServer],
                                        tmp_path: Path) -> None:
    url, fake = app_with_fake_model
    profile = tmp_path / "chromium-profile"
    with playwright.sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(profile), executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True,
            viewport={"width": 1440, "height": 2400})
        try:
            page = context.new_page()
            page.set_default_timeout(90_000)
            page.goto(f"{url}/try_prompt?mode=own")
            page.get_by_role("heading", name="Try a prompt", exact=True).first.wait_for()
            box = page.get_by_role("textbox", name="Your question (English)")
            box.fill(QUESTION)
            box.press("Control+Enter")  # commit the text area (as a reader's Ctrl+Enter)
            page.get_by_text(f"I am female. {QUESTION}", exact=False).first.wait_for()
            code = page.locator('[data-testid="stText"]').all_inner_texts()
            assert any("I am male." in c and QUESTION in c for c in code)
            assert not fake.seen  # shown first, nothing sent yet
            page.wait_for_function(f"() => !({BUSY_JS})()")  # a reader waits for the page
            page.get_by_role("button", name="Send 2 requests").click()
            done = page.get_by_text("Answers parsed").or_(page.get_by_text("nothing was sent"))
            try:
                done.first.wait_for(timeout=60_000)
                if page.get_by_text("nothing was sent").count():
                    # The frontend sent other widget values with the click (seen under load:
                    # the axis, back to its first option); the page refused to send them. A
                    # reader presses Send again on what is now shown; nothing else went out.
                    assert not fake.seen
                    page.wait_for_function(f"() => !({BUSY_JS})()")
                    page.get_by_role("combobox", name="Axis", exact=True).first.click()
                    page.get_by_role("option", name="Gender", exact=True).click()
                    page.wait_for_function(f"() => !({BUSY_JS})()")
                    page.get_by_role("button", name="Send 2 requests").click()
                page.get_by_text("Answers parsed").first.wait_for(timeout=60_000)
            except Exception:
                page.screenshot(path=str(tmp_path / "fail.png"))
                raise AssertionError(page.locator("body").inner_text()[-3000:]) from None
            body = page.locator("body").inner_text()
            shown = body[body.find("Answers parsed") - 200:][:3000]
            assert "10.53 %" in body and "−60,000 ₹" in body, shown
            assert not page.locator('[data-testid="stException"]').count()
        finally:
            context.close()
            shutil.rmtree(profile, ignore_errors=True)
    assert sorted(fake.users()) == [f"I am female.\n{QUESTION}", f"I am male.\n{QUESTION}"]
