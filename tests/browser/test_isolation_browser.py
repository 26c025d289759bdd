"""Two readers on one server do not see each other's choices.

Reader B opens a shared link to page 00, reader A (another browser context: its own cookies and
session) opens the page and changes the GPU and the batch slider. B's view, open before A's change
and reloaded after it, still shows the defaults plus its own link, with the numbers the model gives
for them. Then B changes the model, and A's view is unchanged.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Page, expect

from sim.hardware import GPUS
from sim.models import MODELS
from sim.phases import two_phases
from tests.browser.helpers import (
    TIMEOUT_MS,
    expect_no_exception,
    metric_value,
    open_page,
    wait_idle,
    watch_outside,
)
from ui import format as fmt
from ui.setup import DEFAULT_SETUP

pytestmark = pytest.mark.browser

PATH = "two-phases"
B_QUERY = "phases_context=4096"  # B's shared link: one non-default value


def throughput(gpu: str | None = None, model: str | None = None, batch: int = 1, context: int = 512) -> str:
    """The "Decode throughput" metric page 00 shows at the defaults plus these choices."""
    d = DEFAULT_SETUP
    r = two_phases(GPUS[gpu] if gpu else d.gpu, MODELS[model] if model else d.model, 2048, batch, context,
                   d.assumptions)
    return fmt.rate(r.decode_tokens_per_s)


def expect_view(page: Page, gpu: str, model: str, batch: str, context: str, decode_throughput: str) -> None:
    """The widgets show these values and the metric this number (retrying while a rerun settles)."""
    expect(page.locator(".st-key-gpu").get_by_role("combobox")).to_have_value(gpu, timeout=TIMEOUT_MS)
    expect(page.locator(".st-key-model").get_by_role("combobox")).to_have_value(model, timeout=TIMEOUT_MS)
    expect(page.locator(".st-key-phases_batch").get_by_role("slider")).to_have_attribute(
        "aria-valuetext", batch, timeout=TIMEOUT_MS)
    expect(page.locator(".st-key-phases_context").get_by_role("slider")).to_have_attribute(
        "aria-valuetext", context, timeout=TIMEOUT_MS)
    expect(metric_value(page, "Decode throughput")).to_have_text(decode_throughput, timeout=TIMEOUT_MS)
    expect_no_exception(page)


def pick(page: Page, key: str, option: str) -> None:
    page.locator(f".st-key-{key}").get_by_role("combobox").click()
    page.get_by_role("option", name=option, exact=True).click()


@pytest.fixture
def two_readers(browser: Browser, browser_context_args):
    a_ctx, b_ctx = browser.new_context(**browser_context_args), browser.new_context(**browser_context_args)
    outside = [watch_outside(a_ctx), watch_outside(b_ctx)]
    yield a_ctx.new_page(), b_ctx.new_page()
    a_ctx.close()
    b_ctx.close()
    assert not outside[0] and not outside[1], outside


def test_two_readers_do_not_share_state(two_readers, streamlit_server):
    a, b = two_readers
    h100, a100 = DEFAULT_SETUP.gpu.name, "A100 80GB SXM"
    llama, qwen = DEFAULT_SETUP.model.name, "Qwen2.5-7B"
    b_view = (h100, llama, "1", "4096", throughput(context=4096))

    open_page(b, streamlit_server.url, PATH, B_QUERY)  # B first: opened before A's change
    expect_view(b, *b_view)

    open_page(a, streamlit_server.url, PATH)
    expect_view(a, h100, llama, "1", "512", throughput())
    pick(a, "gpu", a100)
    slider = a.locator(".st-key-phases_batch").get_by_role("slider")
    slider.focus()
    slider.press("ArrowRight")  # 1 -> 2 sequences
    wait_idle(a)
    a_view = (a100, llama, "2", "512", throughput(gpu=a100, batch=2))
    expect_view(a, *a_view)
    expect(a).to_have_url(re.compile(r"gpu=A100.*phases_batch=2|phases_batch=2.*gpu=A100"))

    # B, open all along, did not move; reloaded (a new session, opened after A's change) it shows its link
    expect_view(b, *b_view)
    b.reload()
    wait_idle(b)
    expect_view(b, *b_view)
    assert b.url.endswith(f"/{PATH}?{B_QUERY}")

    # B changes the model: A's view and URL stay as A left them
    pick(b, "model", qwen)
    wait_idle(b)
    expect_view(b, h100, qwen, "1", "4096", throughput(model=qwen, context=4096))
    expect(b).to_have_url(re.compile(r"model=Qwen2\.5-7B"))
    expect_view(a, *a_view)
    assert "model=" not in a.url
