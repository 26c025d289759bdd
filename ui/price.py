"""GPU rental price and what a token costs: the sidebar's price control and the pages' cost metric.

One definition of the cost (``sim.metrics.dollars_per_million_tokens``); the default price per
GPU-hour is a typical on-demand figure with its source (``ui.sources.GPU_PRICES``), editable and kept
in the link as ``price``.
"""

from __future__ import annotations

import streamlit as st

from sim.metrics import dollars_per_million_tokens
from ui import format as fmt
from ui.sources import gpu_price

PRICE_RANGE = (0.01, 1000.0)  # dollars per GPU-hour (also what a hand-edited link is held to)


def render_price(gpu_name: str, n_gpus: int, draw=st) -> float:
    """The price per GPU-hour control (call inside the sidebar); returns the price in use. ``draw``:
    ``streamlit``, or what stands in for it (``ui.setup._StateReader``)."""
    default, source = gpu_price(gpu_name)
    price = draw.number_input("GPU price, $ per GPU-hour", *PRICE_RANGE, value=None, step=0.1,
                              format="%.2f", placeholder=f"{default:.2f} (typical on demand)", key="price",
                              bind="query-params",
                              help=f"Empty: {default:.2f} $/h, {source}. Gives the cost per million "
                                   "output tokens on the pages that show throughput.")
    price = default if price is None else float(price)
    per = f" · ${price * n_gpus:,.2f}/h per replica of {n_gpus}" if n_gpus > 1 else ""
    draw.caption(f"${price:,.2f} per GPU-hour{per}")
    return price


def cost_help(tokens_per_s: float, setup) -> str:
    n, price = setup.model.tp, setup.price_per_gpu_hour
    per_gpu = f" ({fmt.rate(tokens_per_s / n)} per GPU)" if n > 1 else ""
    return (f"What a million output tokens cost at the rental price: {n} GPU{'s' if n > 1 else ''} at "
            f"${price:,.2f} per GPU-hour (${n * price:,.2f}/h a replica) making "
            f"{fmt.rate(tokens_per_s)}{per_gpu}: n × price / 3600 / (tok/s) × 10⁶. The same per GPU "
            "and per replica. The price is the sidebar's.")


def cost_metric(container, label: str, tokens_per_s: float, setup, help_extra: str = "") -> None:
    """A metric: $ per million output tokens at ``tokens_per_s`` (the replica's rate)."""
    value = dollars_per_million_tokens(tokens_per_s, setup.price_per_gpu_hour, setup.model.tp)
    container.metric(label, fmt.dollars(value), border=True, help=cost_help(tokens_per_s, setup)
                     + (" " + help_extra if help_extra else ""))


def cost_sentence(setup, rates: dict[str, float]) -> str:
    """One sentence: what a million output tokens cost at each named rate (the replica's tok/s)."""
    n, price = setup.model.tp, setup.price_per_gpu_hour
    parts = [f"{fmt.dollars(dollars_per_million_tokens(r, price, n))} with {name} "
             f"({fmt.rate(r)})" for name, r in rates.items()]
    gpus = f"{n} GPUs at ${price:,.2f} per GPU-hour (${n * price:,.2f}/h a replica)" if n > 1 else (
        f"one GPU at ${price:,.2f} an hour")
    return f"**Cost per million output tokens**, {gpus}: " + "; ".join(parts) + "."
