"""Human-readable numbers with units, for metrics and hover text."""

from __future__ import annotations

import math


def sig(value: float, digits: int = 3) -> str:
    """``value`` to ``digits`` significant digits, never in exponent notation: Python's ``g`` format
    writes 999.7 as '1e+03' and 17,600 as '1.76e+04' (from there on whole numbers with separators),
    and 0.00001234 as '1.23e-05' (written out)."""
    text = f"{value:.{digits}g}"
    if "e+" in text:
        return f"{value:,.0f}"
    if "e-" in text:  # below 1e-4: as many decimals as the significant digits need
        return f"{value:.{digits - 1 - math.floor(math.log10(abs(value)))}f}"
    return text


def seconds(value_s: float) -> str:
    """Seconds as µs / ms / s with 3 significant digits (whole seconds with separators from 1,000 s;
    ``duration`` for waits that may run to minutes)."""
    if not math.isfinite(value_s):
        return "n/a"
    if value_s < 0.9995e-3:  # 999.96 µs would round to '1e+03 µs': 1 ms
        return f"{sig(value_s * 1e6)} µs"
    if value_s < 0.9995:
        return f"{sig(value_s * 1e3)} ms"
    return f"{sig(value_s)} s"


def duration(value_s: float) -> str:
    """A wait that may run to hours: seconds below a minute (``seconds``), then minutes, then hours."""
    if not math.isfinite(value_s) or value_s < 60:
        return seconds(value_s)
    if value_s < 3600:
        return f"{sig(value_s / 60)} min"
    return f"{sig(value_s / 3600)} h"


def rate(value: float, unit: str = "tok/s") -> str:
    """A rate with thousands separators, 3 significant digits below 1000."""
    if not math.isfinite(value):
        return "n/a"
    return f"{sig(value)} {unit}"


def signed(value: float) -> str:
    """'+124', '-0.583', '-1,240': ``sig`` with the sign, for a metric's delta (a whole-number format
    rounds a few tokens a second lost to '-0')."""
    return ("-" if value < 0 else "+") + sig(abs(value))


def percent(fraction: float, digits: int = 1) -> str:
    """0.0026 -> '0.26%'; keeps small values readable rather than rounding them to 0."""
    if not math.isfinite(fraction):
        return "n/a"
    pct = fraction * 100
    if 0 < abs(pct) < 1:
        return f"{pct:.2f}%"
    return f"{pct:.{digits}f}%"


def bytes_(value_b: float) -> str:
    """Memory in binary units, GiB (2^30) / MiB / KiB, as nvidia-smi, the engines' logs, the sidebar
    and ``sim.memory``'s notices count it (one unit for memory on every page)."""
    for unit, scale in (("TiB", 2.0**40), ("GiB", 2.0**30), ("MiB", 2.0**20), ("KiB", 2.0**10)):
        if value_b >= scale:
            return f"{sig(value_b / scale)} {unit}"
    return f"{value_b:.0f} B"



def sentence_case(text: str) -> str:
    """A label mid-sentence: its first letter lowered unless it starts an acronym ('Paged KV cache' ->
    'paged KV cache', 'KV cache' stays; str.lower() made it 'paged kv cache')."""
    if not text or (len(text) > 1 and text[1].isupper()):
        return text
    return text[0].lower() + text[1:]


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """'1 sequence', '32 sequences', '1,024 slots': a count and its noun, singular for one."""
    return f"{n:,} {noun if n == 1 else (plural or noun + 's')}"


def a_count(n: int) -> str:
    """'a 2,048', 'an 8,192', 'an 11,000', 'an 18': the article a whole number takes read aloud
    (eight, eleven and eighteen, alone or leading a group of thousands, start with a vowel sound)."""
    head = f"{int(n):,}".split(",")[0]
    return f"{'an' if head.startswith('8') or head in ('11', '18') else 'a'} {int(n):,}"


def count(value: float) -> str:
    if not math.isfinite(value):
        return "never"
    return f"{value:,.0f}"


def dollars(value: float) -> str:
    """$0.284, $0.400, $12.3, $1,234: three significant digits below $100, whole dollars above."""
    if not math.isfinite(value):
        return "n/a"
    if value >= 100:
        return f"${value:,.0f}"
    # three significant digits, trailing zeros kept: $0.400 beside $0.687, not $0.4
    return "$" + f"{value:#.3g}".rstrip(".")
