"""A page that lost its connection for good reloads itself, and its URL restores the view.

Streamlit's frontend reconnects by itself when the server goes away and comes back. But when it fails
to process a message (the known case: "Cached ForwardMsg MISS" under rapid reruns,
streamlit/streamlit#11357) it closes the websocket and never tries again; the page keeps its old,
greyed-out numbers and says nothing. This fixed script (no user input reaches it) watches for a closed
websocket that no new connection replaces within a few seconds, checks that the server answers its
health check, and then reloads the page: the URL holds every setting, so the reader gets the same
view back. While the server is down it keeps waiting (Streamlit's own reconnect handles that case).

After a reconnect it also asks for one full rerun (Streamlit's rerun key, "r"). Each page runs as a
fragment (app.py): a widget on it reruns only that fragment, and a server that was restarted has never
run it, so it drops such a rerun ("The fragment ... does not exist anymore") and the reader's next
change would be lost; a change made as the old server died is lost the same way. The full rerun sends
the page's current widgets, so the new server draws what the widgets say and knows the fragment.

And a page whose elements stay loading placeholders (``stSkeleton``: an element whose code chunk
never arrived) while no script runs for STUCK_MS reloads once; the URL brings the view back. Seen in
CI twice, under load, at a page's first load (README, *Restarts*); the browser test stalls a chunk
to check the reload.
"""

from __future__ import annotations

import os

import streamlit as st


def _test_scale(wait: str) -> float:
    """``GPU_LIES_WATCHDOG_<wait>_SCALE`` (``GRACE`` or ``STUCK``): a number that shortens that wait
    below for the browser test that forces it, clamped to [0.1, 1]; anything else, or nothing, is 1."""
    try:
        scale = float(os.environ.get(f"GPU_LIES_WATCHDOG_{wait}_SCALE", "1"))
    except ValueError:
        return 1.0
    return min(1.0, max(0.1, scale)) if scale == scale else 1.0


# A closed connection not replaced within GRACE_MS is lost (Streamlit retries first).
GRACE_MS = round(10_000 * _test_scale("GRACE"))
FIRST_RERUN_MS = 50  # after a reconnect, the full rerun is asked for this soon
RERUN_AFTER_MS = 400  # and again if nothing came back this soon (the frontend not ready for the key)
# Placeholders left STUCK_MS with no script running: reload (once until a good load).
STUCK_MS = round(12_000 * _test_scale("STUCK"))

_SCRIPT = """<script>
(() => {
  if (window.__gpuLiesWatchdog) return;
  window.__gpuLiesWatchdog = {reloads: 0, reruns: 0, lastOpen: performance.now(), lastMessage: 0};
  const w = window.__gpuLiesWatchdog;
  const GRACE = __GRACE_MS__;
  const base = document.baseURI.replace(/[?#].*$/, "").replace(/[^/]*$/, "");
  const check = (closedAt) => setTimeout(async () => {
    if (w.lastOpen > closedAt) return;  // a new connection replaced it
    try {
      const r = await fetch(base + "_stcore/health", {cache: "no-store"});
      if (r.ok && w.lastOpen <= closedAt) { w.reloads += 1; location.reload(); return; }
    } catch (e) {}
    check(closedAt);  // server not up yet: Streamlit's own reconnect may still win
  }, GRACE);
  const rerun = (tries) => {  // Streamlit's own "rerun" key: a full rerun with the widgets' values
    const asked = performance.now();
    for (const type of ["keydown", "keyup"]) {
      document.dispatchEvent(new KeyboardEvent(type, {key: "r", code: "KeyR", keyCode: 82, which: 82,
                                                      bubbles: true}));
    }
    w.reruns = (w.reruns || 0) + 1;
    // The frontend ignores the key until it has taken the new socket: no answer yet, ask again.
    setTimeout(() => { if (w.lastMessage < asked && tries > 1) rerun(tries - 1); }, __RERUN_MS__);
  };
  // Elements stuck as loading placeholders (their code chunk never arrived) while no script runs:
  // reload once; a load that finishes clears the mark, so a later stall may reload again.
  const mark = "gpuLiesStuckReload";
  setInterval(() => {
    const stuck = document.querySelector('[data-testid="stSkeleton"]') &&
                  !document.querySelector('[data-testid="stStatusWidget"]');
    if (!stuck) {
      w.stuckSince = 0;
      if (document.querySelector('[data-testid="stMain"] h1')) sessionStorage.removeItem(mark);
      return;
    }
    w.stuckSince = w.stuckSince || performance.now();
    if (performance.now() - w.stuckSince > __STUCK_MS__ && !sessionStorage.getItem(mark)) {
      sessionStorage.setItem(mark, "1");
      w.reloads += 1;
      location.reload();
    }
  }, 500);
  const close = WebSocket.prototype.close;
  WebSocket.prototype.close = function (...args) {  // the frontend closing its socket itself
    if (String(this.url).includes("_stcore/stream")) check(performance.now());
    return close.apply(this, args);
  };
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {  // later sockets: note when one opens or closes
    constructor(...args) {
      super(...args);
      if (String(args[0]).includes("_stcore/stream")) {
        this.addEventListener("open", () => {  // created after the page loaded: a reconnect
          w.lastOpen = performance.now();
          setTimeout(() => rerun(10), __FIRST_RERUN_MS__);
        });
        this.addEventListener("message", () => { w.lastMessage = performance.now(); });
        this.addEventListener("close", () => check(performance.now()));
      }
    }
  };
})();
</script>""".replace("__GRACE_MS__", str(GRACE_MS)).replace("__RERUN_MS__", str(RERUN_AFTER_MS)).replace(
    "__FIRST_RERUN_MS__", str(FIRST_RERUN_MS)).replace("__STUCK_MS__", str(STUCK_MS))


def install() -> None:
    """Add the watchdog to the page (once per session is enough; repeating it is harmless)."""
    st.html(_SCRIPT, unsafe_allow_javascript=True, width="content")
