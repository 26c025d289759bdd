"""Display equations in the pages' markdown are fenced the way Streamlit's markdown reads them.

remark-math opens a display block only with ``$$`` alone on its line and closes it with ``$$`` alone
on its line; ``$$`` followed by a formula on the same line, closed on a later line, swallowed
everything after it into one failed formula (page 00's "How this is computed" until 2026-12-06).
A one-line ``$$...$$`` is fine. ``tests/browser/test_math_browser.py`` checks the rendering itself."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted([*ROOT.glob("app_pages/*.py"), *ROOT.glob("ui/*.py"), ROOT / "app.py"])


@pytest.mark.parametrize("path", SOURCES, ids=[p.name for p in SOURCES])
def test_display_math_is_fenced_on_its_own_lines(path):
    fences = 0
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        text = line.strip()
        if "$$" not in text:
            continue
        if text == "$$":
            fences += 1
            continue
        one_line = text.startswith("$$") and text.endswith("$$") and text.count("$$") == 2 and len(text) > 4
        assert one_line, f"{path.name}:{n}: {text[:60]}"
    assert fences % 2 == 0, f"{path.name}: an unclosed $$ block"


def test_the_rule_catches_the_old_form(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text('X = r"""\n$$t = a,\\;\nb$$\n"""\n', encoding="utf-8")
    with pytest.raises(AssertionError):
        test_display_math_is_fenced_on_its_own_lines(bad)
