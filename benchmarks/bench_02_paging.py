"""Section 02: the paging pool (both policies), the real-card fit and the chunked-prefill model."""

from benchmarks.core import PageCase, SimCase
from sim.chunked import chunked_prefill
from sim.hardware import GPUS
from sim.models import MODELS
from sim.paging import card_fit, compare, simulate

H100, LLAMA8 = GPUS["H100 SXM"], MODELS["Llama-3.1-8B"]

SIM_CASES = [
    SimCase("paging.simulate paged, default stream (64 pages, 240 steps)", lambda: simulate("paged"), 10),
    SimCase("paging.simulate reserved, default stream", lambda: simulate("reserved"), 10),
    SimCase("paging.compare, both policies, default stream", compare, 10),
    SimCase("paging.card_fit, H100 + Llama-3.1-8B", lambda: card_fit(H100, LLAMA8), 5),
    SimCase("chunked.chunked_prefill, defaults (8k prompt, chunk 512)",
            lambda: chunked_prefill(H100, LLAMA8), 5),
    SimCase("chunked.chunked_prefill, 32k prompt in 64-token chunks",
            lambda: chunked_prefill(H100, LLAMA8, 32768, 256, 64), 5),
]

PAGE = "app_pages/paging.py"
PAGE_CASES = [
    PageCase("02 Paging: step slider", PAGE, [("select_slider", "paging_step", [30, 120, 200, 239])]),
    PageCase("02 Paging: reserved/paged toggle", PAGE, [("toggle", "paging_paged", [True, False])]),
    PageCase("02 Paging: page size", PAGE, [("select_slider", "paging_page_tokens", [8, 16, 32, 64])]),
    PageCase("02 Paging: max output", PAGE, [("select_slider", "paging_max_output", [64, 256, 512, 1024])]),
    PageCase("02 Paging: chunk size", PAGE, [("select_slider", "paging_chunk", [64, 512, 2048, 8192])]),
]
