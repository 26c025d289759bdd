"""Your numbers: paste an engine's benchmark, see the model's error on it, fit the assumptions to
it, and apply them to every page (the link carries them)."""

import hashlib
import statistics

import streamlit as st

from calib.fit import fit
from calib.parsers import FORMATS, MAX_BYTES, BenchmarkParseError, decode_bytes, parse_benchmark
from calib.reader import price, reader_rows
from sim.measured import shipped_csv
from sim.truth import RowError
from ui import format as fmt
from ui.layout import chart, data_expander, header, how_computed, metric_row, next_link, stop_page
from ui.setup import current_setup
from ui.state import drop_over_cap
from ui.yours import (
    APPLIED_KEY,
    FIT_NAMES,
    LABELS,
    MAX_PASTE_CHARS,
    PRIOR_WEIGHT,
    apply_to_sidebar,
    assumptions_table,
    at_bound,
    default_fit_names,
    errors_figure,
    rows_table,
    slider_bounds,
    slider_values,
)

#: Four real rows of measured.csv as a reader would type them, four engines and three kinds: the
#: EAGLE-3 paper's SGLang baseline (batch-1 decode, BF16), gpt-fast's batch-1 decode on an A100,
#: TensorRT-LLM's offline throughput (FP8, 3,000 requests) and lmdeploy's time to first token. At its
#: defaults the model is 8-16 % slower than each: a fit has something to find.
EXAMPLE = shipped_csv(("eag-01", "gf-01", "t017-01", "lmd-06"))

header("", "Your numbers", """
Paste what **your** engine measured (`vllm bench serve`, `sglang.bench_serving`, `trtllm-bench`, or
rows you type). The model prices each run, shows its error, and can fit its assumptions to your runs
and use them on every page.
""")

setup = current_setup()


# Streamlit drops a widget's value on a run that does not draw it (any other page): keep the paste
# apart, so coming back to this page shows it again.
_SAVED = "_yours_saved_text"
if "yours_text" not in st.session_state and st.session_state.get(_SAVED):
    st.session_state["yours_text"] = st.session_state[_SAVED]


def plain(text: str) -> None:
    """Text that quotes the reader's input (ids, names, the file's name): a code block, so nothing in
    it is read as markdown or HTML."""
    st.code(text, language=None, wrap_lines=True)


_TOO_LONG = "_yours_too_long"  # the length of a paste over the cap, which the text box then drops


def _example() -> None:
    st.session_state["yours_text"] = EXAMPLE
    st.session_state[_TOO_LONG] = 0


# No max_chars: Streamlit's text area drops a paste longer than that whole, without a word. A paste
# over the cap is dropped here instead, and the page says why (ui.state.drop_over_cap).
text = st.text_area(
    "Benchmark output or rows", key="yours_text", height=140,
    on_change=drop_over_cap("yours_text", _TOO_LONG, MAX_PASTE_CHARS),
    placeholder="============ Serving Benchmark Result ============\nSuccessful requests: ...",
    help="Formats: " + "; ".join(f"{k}: {v}" for k, v in FORMATS.items()) + ". Runs that do not "
         f"name their GPU or model ran on the sidebar's setup. At most {MAX_PASTE_CHARS:,} characters "
         "(a larger file: upload it).")
st.session_state[_SAVED] = text
with st.container(horizontal=True, gap="small", vertical_alignment="center"):
    with st.popover("Upload a file", icon=":material/upload_file:"):
        upload = st.file_uploader("A benchmark's output (text, JSON, JSONL, CSV), up to 1 MB",
                                  key="yours_file", type=["txt", "log", "json", "jsonl", "csv"])
    st.button("Load an example (four measured runs, four engines)", key="yours_example", on_click=_example,
              icon=":material/science:", type="tertiary")
source, origin = text, "the text box"
too_long = st.session_state.get(_TOO_LONG)
if upload is None and too_long:
    st.error(f"The pasted text was {too_long:,} characters, so it was not kept: at most "
             f"{MAX_PASTE_CHARS:,} are read. Upload it as a file instead (up to {MAX_BYTES // 1_000_000} "
             "MB), or paste the summary lines only.", icon=":material/block:")
    next_link(__file__)
    stop_page()
if upload is not None:
    if upload.size > MAX_BYTES:
        st.error(f"The file is {upload.size:,} bytes; at most {MAX_BYTES:,} are read.",
                 icon=":material/block:")
        stop_page()
    source, origin = decode_bytes(upload.getvalue()), "the uploaded file"

if not source.strip():
    st.info("Nothing pasted yet: paste a benchmark's output above, or load the example.",
            icon=":material/content_paste:")
    next_link(__file__)
    stop_page()

try:
    parsed = parse_benchmark(source)
    got = reader_rows(parsed.rows, setup.gpu, setup.model, setup.assumptions)
except (BenchmarkParseError, RowError) as err:
    st.error(f"Could not read {origin}:", icon=":material/error:")
    plain(str(err))  # the message quotes the input: plain text, never markdown
    next_link(__file__)
    stop_page()

preds = price(got, setup.assumptions)
priced = [p for p in preds if p.model_value is not None]
results = st.container()  # filled below, once the fit has run: the numbers first, the fit's controls after
names = st.multiselect("Assumptions the fit may move", FIT_NAMES, default=default_fit_names(got.rows),
                       format_func=LABELS.get, key="yours_names",
                       help="Few runs cannot decide every assumption: a weak pull keeps the ones your runs "
                            "do not constrain near the sidebar's values.")
result = None
if priced and names:
    digest = hashlib.sha256(source.encode()).hexdigest()
    memo = st.session_state.setdefault("_yours_fits", {})
    # One fit kept, for these runs on this exact GPU and model (a Custom GPU or a pasted config keeps
    # its label when its numbers change). It is reused while the sidebar holds its starting values
    # or the values its Apply set: refitting from applied values would drift a little each time.
    memo_key = (digest, repr(setup.gpu), repr(setup.model), tuple(names))
    start, kept = memo.get(memo_key, (None, None))
    applied = st.session_state.get(APPLIED_KEY)
    reuse = kept is not None and (start == setup.assumptions or (
        not isinstance(kept, str) and applied == slider_values(kept.assumptions)
        and all(abs(st.session_state.get(k, v) - v) < 1e-9 for k, v in applied.items())))
    if not reuse:
        try:
            kept = fit([p.row for p in priced], setup.assumptions, names=names, prior_weight=PRIOR_WEIGHT,
                       setups=got.setups, bounds=slider_bounds())
        except (ValueError, ZeroDivisionError, FloatingPointError, OverflowError) as err:
            kept = str(err)
        memo.clear()
        memo[memo_key] = (setup.assumptions, kept)
    result = kept


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


median_now = _median([abs(p.error) for p in priced])
median_fit = _median([abs(p.error) for p in result.after]) if hasattr(result, "after") else None
with results:
    with metric_row():
        st.metric("Rows read", f"{len(got.rows)}", border=True,
                  help=f"{len(priced)} of them the model can price. One benchmark run can give several rows "
                       "(its TTFT, its TPOT or its throughput), each a measurement of its own kind.")
        st.metric("Model's median |error| now", fmt.percent(median_now) if priced else "–", border=True,
                  help="At the sidebar's assumptions, at each run's own conditions.")
        in_sample = hasattr(result, "fitted") and len(result.rows) <= len(result.fitted)
        st.metric("After the fit", fmt.percent(median_fit) if median_fit is not None else "–", border=True,
                  delta=(f"{fmt.counted(len(result.fitted), 'assumption')} on "
                         f"{fmt.counted(len(result.rows), 'row')}"
                         if in_sample and median_fit is not None else None),
                  delta_color="off", delta_arrow="off",
                  help="Median |error| with the fitted assumptions, on the same rows they were fitted to"
                       + (f": {len(result.fitted)} free assumptions and "
                          f"{fmt.counted(len(result.rows), 'row')} can match "
                          "almost any numbers, so a small error here is no evidence; add runs at other "
                          "batches and lengths." if in_sample else "."))
    st.caption(f"Read {fmt.counted(len(got.rows), 'row')} from {origin} as **{parsed.fmt}**. What a run "
               f"does not name (its GPU, its model, their precisions, its GPU count) is the sidebar's: "
               f"{setup.label}; what it names is kept, so a run on another GPU can be priced with the "
               "sidebar's model. A GPU or model the app has no preset for is priced only where the "
               "sidebar's is Custom, with its figures or config; otherwise the run is shown, not priced "
               "(the notes list each choice).")
    if result is not None and not isinstance(result, str):
        chart(errors_figure(result), key="yours_errors", title="The model's error on each of your runs",
              alt=f"Signed error per run before and after the fit; median |error| {median_now:.0%} before, "
                  f"{median_fit:.0%} after.")

if isinstance(result, str):
    st.warning("No fit:", icon=":material/warning:")
    plain(result)
elif result is not None:
    values = slider_values(result.assumptions)
    st.dataframe(assumptions_table(setup.assumptions, result), hide_index=True, width="stretch")
    bound = at_bound(result)
    if bound:
        st.caption(
            "At a bound: "
            + ", ".join(f"{fmt.sentence_case(LABELS[n])} ({side})" for n, side in bound.items())
            + ". The runs ask for a value past the range the fit may use (an efficiency of 1 is this GPU's "
            "own measured ceiling, its GEMM or STREAM microbenchmark, not the spec peak; a time of 0 is "
            "none at all), so the model misses something in them: read the error left after the fit as "
            "that, not as noise. With few runs, free fewer assumptions.")
    # The fit minimises the error of log time, summed: it can raise the median |error|. Worse means
    # worse as the page shows it: once applied, the sliders hold the fit rounded, which can read a
    # hair better than the fit itself ("2.0 % against 2.0 %" had withdrawn the fit just applied).
    worse = (median_fit is not None and median_now is not None and median_fit > median_now
             and fmt.percent(median_fit) != fmt.percent(median_now))
    if worse:
        st.warning(
            f"**The fit did not help.** Its median |error| is {fmt.percent(median_fit)}, against "
            f"{fmt.percent(median_now)} at the sidebar's assumptions. It minimises the squared error of "
            "log time over all your runs, so runs that disagree with each other (the same conditions, "
            "different numbers) or that the model cannot follow pull it where no run is matched well: "
            "compare the runs in the chart above before using it. So it is not offered for every page.",
            icon=":material/trending_up:")
    else:
        st.button("Apply the fitted assumptions to every page", key="yours_apply", type="primary",
                  on_click=apply_to_sidebar, args=(values,), icon=":material/done_all:",
                  help="Sets the sidebar's assumption sliders; the URL carries them, so a copied link "
                       "opens the calibrated view (your pasted text does not travel).")
    applied = st.session_state.get(APPLIED_KEY)
    if applied and all(abs(st.session_state.get(k, v) - v) < 1e-9 for k, v in applied.items()):
        st.success("Every page now uses these assumptions, and the link in the address bar carries them.",
                   icon=":material/link:")
elif not priced:
    st.warning("The model cannot price any of these runs:", icon=":material/warning:")
    plain("\n".join(f"{p.row.id}: {p.reason}" for p in preds))
elif not names:
    st.info("Choose at least one assumption for the fit to move.", icon=":material/tune:")

if parsed.notes or got.notes or upload is not None:
    st.caption("What was read, and what was not used:")
    plain("\n".join((*((f"file: {upload.name}",) if upload is not None else ()), *parsed.notes, *got.notes)))

how_computed(
    r"""
Each run is priced the way `python -m sim.truth` prices `measured.csv` (README, *The model*): a static
batch as one prefill and its decode steps, an online run's time per output token in steady state
(Little's law for Poisson load, closed loop for a concurrency cap), an offline run's output tokens/s
with its engine's KV-cache sizing, a TTFT as one prefill on an idle server.

The fit is `calib.fit`, the one `scripts/calibrate.py` made the defaults with: least squares on
$\log(t_\text{model} / t_\text{measured})$, soft-L1 loss with a 20 % scale, bounded by the sliders'
ranges; plus, because a few runs cannot decide six assumptions, a weak pull (weight 0.1 in each
assumption's scale) towards the sidebar's value. By default it frees the bandwidth efficiency and the
host time, and the compute efficiency first when a run is math-heavy (a TTFT, an offline run, a static
batch of 64 or more), but fewer than there are runs (at least one: as many as the runs fit them
exactly); the box above frees the others.
""",
    assumptions=[
        "A run that does not name its GPU ran on the sidebar's GPU; one that does not name its model ran "
        "the sidebar's model, at the run's precisions where it gives them.",
        "TTFT under load includes queueing, which the idle-server TTFT does not: such TTFTs are read "
        "but not fitted (the notes say so).",
        "The fitted values are applied rounded to each slider's step.",
    ],
    sources=["Formats: " + "; ".join(FORMATS.values()) + " (tests/fixtures/bench/README.md: versions)."],
)
data_expander(lambda: {"Your runs": rows_table(preds)}, key="yours_data")
next_link(__file__)
