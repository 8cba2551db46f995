"""Shareable links: a page's settings in the URL, a "Link to this experiment" control, and a link's bad
parameters named in one st.warning (the page's defaults are used for them).

Streamlit 1.67 binds a widget to the URL with bind="query-params" (the widget's key is the parameter's name); the
pages whose widgets carry their own ranges and options (Compare, k / n experiments, Trees) use it, and Streamlit
drops a value the widget would not take. Step through's number fields carry no range of their own (a field left
empty must say so, ui/stepping.py), so its parameters are read here into the session state on the page's first run
in a session and written back to st.query_params after each run. Either way `check` reads the link's parameters
first, against the same Param list, and names every unknown or out-of-range one.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from urllib.parse import urlencode

import streamlit as st

BIND = "query-params"  # what the pages pass as bind= (Streamlit >= 1.67)


@dataclass(frozen=True)
class Param:
    """One setting in the URL: its name there (= the widget's key), its kind and what it may be."""
    key: str
    kind: str                      # "int", "float", "bool", "choice", "choices", "text", "range"
    lo: float | None = None
    hi: float | None = None
    options: tuple = ()

    def parse(self, raw: str | list[str]):
        """The value a URL string stands for; ValueError (why) when it is not one this setting takes."""
        vals = raw if isinstance(raw, list) else [raw]
        if self.kind in ("choices", "range"):
            out = [self._one(v) for v in vals]
            if self.kind == "range" and (len(out) != 2 or out[0] > out[1]):
                raise ValueError(f"a range of two numbers from {self._num(self.lo)} to {self._num(self.hi)}")
            return tuple(out) if self.kind == "range" else out
        if len(vals) != 1:
            raise ValueError("one value")
        return self._one(vals[0])

    def _one(self, v: str):
        if self.kind in ("choice", "choices"):
            opts = [str(o) for o in self.options]
            if v not in opts:
                raise ValueError("one of " + ", ".join(opts[:8]) + (", …" if len(opts) > 8 else ""))
            return self.options[opts.index(v)]
        if self.kind == "bool":
            if v.lower() not in ("true", "false"):
                raise ValueError("true or false")
            return v.lower() == "true"
        if self.kind == "text":
            if len(v) > 20000:
                raise ValueError("at most 20,000 characters")
            return v
        try:
            x = int(v) if self.kind in ("int", "range") else float(v)
        except ValueError:
            raise ValueError(f"a number from {self._num(self.lo)} to {self._num(self.hi)}") from None
        if not math.isfinite(x) or (self.lo is not None and x < self.lo) or (self.hi is not None and x > self.hi):
            raise ValueError(f"a number from {self._num(self.lo)} to {self._num(self.hi)}")
        return x

    @staticmethod
    def _num(x) -> str:
        return "any" if x is None else f"{x:g}"

    def text(self, value) -> str | list[str]:
        if self.kind in ("choices", "range"):
            return [str(v) for v in value]
        if self.kind == "bool":
            return "true" if value else "false"
        return f"{value:g}" if isinstance(value, float) else str(value)


def _raw() -> dict[str, str | list[str]]:
    qp = st.query_params
    return {k: (qp.get_all(k) if len(qp.get_all(k)) > 1 else qp.get(k)) for k in qp.keys()}


def check(page: str, params: list[Param], extra: tuple[str, ...] = ()) -> dict:
    """Once per session and page: the link's parameters that this page takes, parsed ({key: value}); one st.warning
    naming every unknown or bad one (those are left to the page's defaults). Later runs: {} (the widgets hold
    the settings then)."""
    flag = f"_link_checked_{page}"
    if st.session_state.get(flag):
        return {}
    st.session_state[flag] = True
    by_key = {p.key: p for p in params}
    good, bad = {}, []
    for name, raw in _raw().items():
        p = by_key.get(name)
        if p is None:
            if name not in extra and name.lower() not in ("embed", "embed_options"):
                bad.append(f"`{name}` (not a setting of this page)")
                del st.query_params[name]   # not carried on into this page's own link
            continue
        try:
            good[name] = p.parse(raw)
        except ValueError as e:
            shown = raw if isinstance(raw, str) else ",".join(raw)
            bad.append(f"`{name}={shown[:40]}` (it takes {e})")
    if bad:
        st.warning("This link's " + ("parameter " if len(bad) == 1 else "parameters ") + "; ".join(bad)
                   + (" was" if len(bad) == 1 else " were") + " ignored: the page's defaults are used instead.",
                   icon=":material/link_off:")
    return good


def apply(values: dict) -> None:
    """Put a link's parsed values into the session state, before the widgets are drawn (Step through)."""
    for key, value in values.items():
        st.session_state[key] = value


def write(params: list[Param], defaults: dict, extra: dict | None = None) -> dict[str, str | list[str]]:
    """The page's settings that differ from its defaults, written to the URL (Step through); returns them."""
    out = {}
    for p in params:
        v = st.session_state.get(p.key)
        if v is not None and v != defaults.get(p.key):
            out[p.key] = p.text(v)
    out.update(extra or {})
    st.query_params.from_dict(out)
    return out


def pin(params: list[Param]) -> None:
    """Settings drawn by widgets that show labels for their options (format_func) cannot be bound: the URL would
    hold the label, and a link naming the option would be dropped. Their values go into the URL here (a page applies
    a link's values to them with `apply`, as Step through does)."""
    for p in params:
        if st.session_state.get(p.key) is not None:
            st.query_params[p.key] = p.text(st.session_state[p.key])


def current(params: list[Param]) -> dict[str, str | list[str]]:
    """Every one of these settings the page holds now, as a link carries it (Compare, k / n, Trees: the browser
    updates the bound widgets' URL itself, and the server hears of it only on the next run)."""
    ss = st.session_state
    return {p.key: p.text(ss[p.key]) for p in params if ss.get(p.key) is not None}


def share(url_path: str, query: dict, what: str) -> None:
    """The "Link to this experiment" control: the page's URL with its settings, ready to copy."""
    base = (st.context.url or "http://localhost:8501").rstrip("/")
    if base.endswith("/" + url_path):  # the page's own path (Streamlit trims it only for some layouts)
        base = base[: -len(url_path) - 1]
    url = f"{base}/{url_path}" + (f"?{urlencode(query, doseq=True)}" if query else "")
    with st.popover("Link to this experiment", icon=":material/link:"):
        st.caption(f"Opens this page with these settings ({what}). Copy it with the button at the right of the box.")
        st.code(url, language=None, wrap_lines=True)
