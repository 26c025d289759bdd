"""A headless Streamlit reader: the browser's side of the websocket protocol, without a browser.

One :class:`Reader` is one browser tab. It speaks what Streamlit's frontend speaks at
``/_stcore/stream`` (protobuf ``BackMsg`` up, ``ForwardMsg`` down, read from the installed
streamlit package, 1.67):

* Opening a link sends a ``rerun_script`` whose ``ClientState`` carries the URL's query string and
  the page's url path as ``page_name`` (the page hash is not known yet). The server answers with a
  ``new_session`` (which names the page's script hash), the page's ``delta``s and a
  ``script_finished``.
* Every widget in the deltas has an id that ends with its user key (``$$ID-<hash>-<key>``). Like the
  frontend's WidgetStateManager, the reader keeps the current value of every widget it was shown
  (its default, or the value the server pushed with ``set_value``) and drops those that were not
  rendered in the last run.
* A widget change is a ``rerun_script`` with the page hash, the current query string and the FULL
  set of widget states, the changed one replaced. The bound widget's parameter is written into the
  query string, as the frontend does with the URL, and a ``page_info_changed`` from the server
  replaces it.
* Large ``new_element`` deltas are cacheable: the reader keeps them by hash and lists the hashes it
  holds in each rerun, so the server may send a ``ref_hash`` in their place, as it does for a browser.

Errors are counted, not raised in the middle of a run: an ``exception`` element, a script that
stops with a compile error, a ``page_not_found``. A timeout or a closed socket raises.

Only the widget kinds the app uses are encoded (sliders, select sliders, selectboxes, radios,
segmented controls and pills, checkboxes and toggles, number inputs, text areas; not file uploads,
which go over HTTP, not the websocket); :meth:`Reader.set` raises
``ValueError`` for anything else and for a value the widget does not offer.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState
from streamlit.runtime.state.common import user_key_from_element_id
from websockets.asyncio.client import ClientConnection, connect

# Element kinds whose state the frontend sends back on every rerun.
WIDGET_KINDS = frozenset({"slider", "selectbox", "radio", "button_group", "checkbox", "number_input",
                          "text_area"})
MAX_MESSAGE_BYTES = 64 * 2**20


class ProtocolError(RuntimeError):
    """The server said something a browser would not expect (or nothing in time)."""


@dataclass
class RunResult:
    """What one script run sent back."""

    elapsed_s: float  # from sending the rerun to receiving script_finished
    elements: int = 0
    bytes: int = 0  # websocket payload received for this run
    elements_seen: list[tuple[str, bytes]] = field(default_factory=list)  # (kind, proto) if kept
    errors: list[str] = field(default_factory=list)
    metrics: dict[str, str] = field(default_factory=dict)  # label -> displayed value
    charts: dict[str, str] = field(default_factory=dict)  # chart id -> figure JSON
    alerts: list[str] = field(default_factory=list)  # st.error/warning/info texts


def _element_value(kind: str, el: Any) -> WidgetState:
    """The widget's current value as the frontend would report it: default, or the pushed value."""
    ws = WidgetState(id=el.id)
    if kind == "slider":
        if el.options:  # select_slider: formatted option labels
            labels = list(el.raw_value) if el.set_value else [el.options[int(i)] for i in el.default]
            ws.string_array_value.data[:] = labels
        else:
            ws.double_array_value.data[:] = list(el.value) if el.set_value else list(el.default)
    elif kind in ("selectbox", "radio"):
        if el.set_value:
            ws.string_value = el.raw_value
        elif el.HasField("default") and 0 <= el.default < len(el.options):
            ws.string_value = el.options[el.default]
        else:
            return None  # no selection: the frontend sends nothing
    elif kind == "button_group":
        labels = list(el.raw_values) if el.set_value else [el.options[i].content for i in el.default]
        ws.string_array_value.data[:] = labels
    elif kind == "checkbox":
        ws.bool_value = el.value if el.set_value else el.default
    elif kind == "number_input":
        value = el.value if el.set_value else el.default
        if el.data_type == type(el).INT:
            ws.int_value = int(value)
        else:
            ws.double_value = value
    elif kind == "text_area":
        if el.set_value:
            ws.string_value = el.value
        elif el.HasField("default"):
            ws.string_value = el.default
        else:
            return None  # no text and no default: the frontend sends nothing
    return ws


def encode(kind: str, el: Any, value: Any) -> tuple[WidgetState, list[str]]:
    """A user's change of the widget to ``value``: its state and its URL parameter values."""
    ws = WidgetState(id=el.id)

    def pick(label: str, options: Iterable[str]) -> str:
        if label not in list(options):
            raise ValueError(f"{user_key_from_element_id(el.id)}: {value!r} is not an option")
        return label

    if kind == "slider" and el.options:
        label = pick(str(value), el.options)
        ws.string_array_value.data[:] = [label]
        return ws, [label]
    if kind == "slider":
        values = [float(v) for v in (value if isinstance(value, list | tuple) else [value])]
        if not all(el.min <= v <= el.max for v in values):
            raise ValueError(f"{user_key_from_element_id(el.id)}: {value!r} outside [{el.min}, {el.max}]")
        ws.double_array_value.data[:] = values
        return ws, [f"{v:g}" for v in values]
    if kind in ("selectbox", "radio"):
        ws.string_value = pick(str(value), el.options)
        return ws, [ws.string_value]
    if kind == "button_group":
        labels = [pick(str(v), [o.content for o in el.options])
                  for v in (value if isinstance(value, list | tuple) else [value])]
        ws.string_array_value.data[:] = labels
        return ws, labels
    if kind == "checkbox":
        ws.bool_value = bool(value)
        return ws, [str(bool(value)).lower()]
    if kind == "number_input":
        if el.data_type == type(el).INT:
            ws.int_value = int(value)
        else:
            ws.double_value = float(value)
        return ws, [str(value)]
    if kind == "text_area":  # typed or pasted whole
        if el.max_chars and len(str(value)) > el.max_chars:  # the frontend drops such a paste, silently
            raise ValueError(f"{user_key_from_element_id(el.id)}: longer than the text area's max_chars")
        ws.string_value = str(value)
        return ws, [ws.string_value]
    raise ValueError(f"{user_key_from_element_id(el.id)}: cannot set a {kind}")


class Reader:
    """One reader's tab: ``await Reader.open(url, path, query)``, then ``await reader.set(key, v)``."""

    def __init__(self, ws: ClientConnection, path: str, query: str, timeout_s: float) -> None:
        self._ws = ws
        self.path = path
        self.query: list[tuple[str, str]] = parse_qsl(query, keep_blank_values=True)
        self.timeout_s = timeout_s
        self.page_hash = ""
        self.widgets: dict[str, tuple[str, Any]] = {}  # user key -> (kind, element proto)
        self.fragments: dict[str, str] = {}  # user key -> id of the fragment that drew it ("" none)
        self._states: dict[str, WidgetState] = {}  # widget id -> current state
        self._cache: dict[str, ForwardMsg] = {}  # hash -> cacheable message
        self.last: RunResult | None = None
        self.keep_elements = False  # keep every element's kind and serialized proto in RunResult

    @classmethod
    async def open(cls, base_url: str, path: str = "", query: str = "",
                   timeout_s: float = 30.0, keep_elements: bool = False) -> Reader:
        """Connect like a browser opening ``base_url/path?query`` and wait for the first run."""
        ws_url = base_url.replace("http://", "ws://", 1).rstrip("/") + "/_stcore/stream"
        ws = await asyncio.wait_for(
            connect(ws_url, subprotocols=["streamlit"], max_size=MAX_MESSAGE_BYTES,
                    compression=None, open_timeout=timeout_s),
            timeout_s)
        reader = cls(ws, path, query, timeout_s)
        reader.keep_elements = keep_elements
        await reader.rerun()
        return reader

    async def close(self) -> None:
        await self._ws.close()

    @property
    def query_string(self) -> str:
        return urlencode(self.query)

    def value(self, key: str) -> WidgetState:
        """The state the reader holds for the widget keyed ``key``."""
        return self._states[self.widgets[key][1].id]

    async def set(self, key: str, value: Any) -> RunResult:
        """Change the widget keyed ``key`` to ``value`` (as a user would) and wait for the rerun."""
        if key not in self.widgets:
            raise ValueError(f"no widget keyed {key!r} on /{self.path} (have {sorted(self.widgets)})")
        kind, el = self.widgets[key]
        state, url_values = encode(kind, el, value)
        self._states[el.id] = state
        if el.query_param_key:
            self.query = [(k, v) for k, v in self.query if k != el.query_param_key]
            self.query += [(el.query_param_key, v) for v in url_values]
        # Like the frontend: a widget drawn inside a fragment (st.fragment) reruns only that fragment.
        return await self.rerun(fragment_id=self.fragments.get(key, ""))

    async def rerun(self, fragment_id: str = "") -> RunResult:
        """Send a rerun_script with the full client state; read until this run's script_finished.
        With ``fragment_id`` only that fragment reruns, and the widgets outside it keep their state."""
        msg = BackMsg()
        cs = msg.rerun_script
        if fragment_id:
            cs.fragment_id = fragment_id
        cs.query_string = self.query_string
        if self.page_hash:  # the frontend names the page by its hash once it knows it
            cs.page_script_hash = self.page_hash
        else:
            cs.page_name = self.path
        cs.widget_states.widgets.extend(self._states.values())
        cs.cached_message_hashes.extend(self._cache)
        started = time.perf_counter()
        await self._ws.send(msg.SerializeToString())
        result = RunResult(0.0)
        seen: dict[str, tuple[str, Any]] = {}
        fragments: dict[str, str] = {}
        started_run = False
        deadline = time.monotonic() + self.timeout_s
        late = f"/{self.path}: no script_finished within {self.timeout_s:.0f} s"
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ProtocolError(late)
            try:
                data = await asyncio.wait_for(self._ws.recv(), remaining)
            except TimeoutError:
                raise ProtocolError(late) from None
            result.bytes += len(data)
            fwd = ForwardMsg()
            fwd.ParseFromString(data)
            kind = fwd.WhichOneof("type")
            if kind == "ref_hash":
                if fwd.ref_hash not in self._cache:
                    raise ProtocolError(f"ref_hash {fwd.ref_hash} for a message this reader never got")
                cached = ForwardMsg()
                cached.CopyFrom(self._cache[fwd.ref_hash])
                cached.metadata.CopyFrom(fwd.metadata)
                fwd, kind = cached, cached.WhichOneof("type")
            elif fwd.metadata.cacheable and fwd.hash:
                self._cache[fwd.hash] = fwd
            if kind == "new_session":
                started_run = True
            elif kind == "navigation":  # the page st.navigation chose (new_session names app.py)
                self.page_hash = fwd.navigation.page_script_hash
            elif kind == "page_info_changed":
                self.query = parse_qsl(fwd.page_info_changed.query_string, keep_blank_values=True)
            elif kind == "page_not_found":
                result.errors.append(f"page not found: {fwd.page_not_found.page_name!r}")
            elif kind == "session_event" and fwd.session_event.HasField("script_compilation_exception"):
                exc = fwd.session_event.script_compilation_exception
                result.errors.append(f"compile error: {exc.type}: {exc.message}")
            elif kind == "delta" and started_run and fwd.delta.WhichOneof("type") == "new_element":
                result.elements += 1
                el_kind = fwd.delta.new_element.WhichOneof("type")
                el = getattr(fwd.delta.new_element, el_kind)
                if self.keep_elements:
                    result.elements_seen.append((el_kind, el.SerializeToString()))
                if el_kind == "exception":
                    result.errors.append(f"exception: {el.type}: {el.message}")
                elif el_kind == "metric":
                    result.metrics[el.label] = el.body
                elif el_kind == "plotly_chart":
                    result.charts[el.id] = el.spec
                elif el_kind == "alert":
                    result.alerts.append(el.body)
                elif el_kind in WIDGET_KINDS and el.id:
                    key = user_key_from_element_id(el.id) or el.id
                    seen[key] = (el_kind, el)
                    fragments[key] = fwd.delta.fragment_id
            elif kind == "script_finished" and started_run:
                status = fwd.script_finished
                if status == ForwardMsg.FINISHED_WITH_COMPILE_ERROR:
                    result.errors.append("script finished with a compile error")
                if status in (ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_WITH_COMPILE_ERROR,
                              ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY):
                    break
        result.elapsed_s = time.perf_counter() - started
        # Like the frontend: keep the states of the widgets this run rendered, adopt pushed values
        # (after a fragment's run, also those of every widget outside it, which it did not redraw).
        states: dict[str, WidgetState] = dict(self._states) if fragment_id else {}
        for el_kind, el in seen.values():
            if el.id in self._states and not el.set_value:
                states[el.id] = self._states[el.id]
            else:
                state = _element_value(el_kind, el)
                if state is not None:
                    states[el.id] = state
        self._states = states
        self.widgets = {**self.widgets, **seen} if fragment_id else seen
        self.fragments = {**self.fragments, **fragments} if fragment_id else fragments
        self.last = result
        return result
