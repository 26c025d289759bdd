"""Every page's equations render in a real browser: KaTeX draws them, and none is a parse error.

A display equation whose ``$$`` shared a line with its first formula was read by Streamlit's markdown
(remark-math) as an unclosed math block: the rest of the expander, its operator table included, was
shown as one red KaTeX error. AppTest cannot see that (it reads the markdown source); the browser
can: KaTeX marks a failed formula ``.katex-error``."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page

from tests.browser.helpers import ci_sample, expect_no_exception, open_page, wait_idle
from ui.nav import ALL_PAGES, HOME

#: Every page (GPU_LIES_FULL_BROWSER=1); by default the three whose "How this is computed" has
#: display equations, page 00 with tensor parallelism's all-reduce row.
CASES = ci_sample([(p.url_path, "") for p in ALL_PAGES] + [("two-phases", "model=Mixtral-8x7B&gpus=2")],
                  [("two-phases", "model=Mixtral-8x7B&gpus=2"), ("continuous-batching", ""),
                   ("speculative-decoding", "")])


@pytest.mark.parametrize("path, query", CASES, ids=[f"{p or 'home'}{'-' + q if q else ''}" for p, q in CASES])
def test_every_expanders_equations_render(page: Page, streamlit_server, path, query):
    page.set_viewport_size({"width": 1280, "height": 800})
    open_page(page, streamlit_server.url, path, query)
    expect_no_exception(page)
    headers = page.locator("[data-testid='stExpander'] summary")
    opened = 0
    for i in range(headers.count()):  # those a reader can open (not in a hidden tab: inert)
        header = headers.nth(i)
        if header.is_visible() and header.evaluate("e => e.closest('[inert]') === null"):
            header.click()
            opened += 1
    wait_idle(page)
    assert opened >= 1 or path == HOME.url_path  # the landing page has no expander
    errors = page.locator(".katex-error")
    assert errors.count() == 0, errors.first.get_attribute("title")
    if path in ("two-phases", "continuous-batching", "speculative-decoding"):  # their "How this is computed"
        assert page.locator(".katex-display").count() >= 1
