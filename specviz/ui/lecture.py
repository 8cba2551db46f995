"""Lecture mode: the app on a folder of recordings, with no model loaded (a projector laptop, a small host).

Started with SPECVIZ_LECTURE=FOLDER (`make lecture RECORDINGS=FOLDER`). Step through and Compare proposers list
the folder's recordings (core/recording.py; each one checked when it is opened, as an upload is) and replay
them; every other page needs a live model and says so in one line; the sidebar loads nothing.
"""
from __future__ import annotations

import os
from pathlib import Path

import streamlit as st

ENV = "SPECVIZ_LECTURE"
MAX_LISTED = 500


def folder() -> Path | None:
    v = os.environ.get(ENV, "").strip()
    return Path(v) if v else None


def on() -> bool:
    return folder() is not None


def files() -> list[Path]:
    """The folder's recordings (*.json, newest first); [] when the folder cannot be read."""
    f = folder()
    try:
        found = [p for p in f.glob("*.json") if p.is_file()] if f else []
    except OSError:
        return []
    return sorted(found, key=lambda p: p.stat().st_mtime, reverse=True)[:MAX_LISTED]


NEEDS_MODEL = ("needs a live model, and this server runs in lecture mode (recordings only, no model loaded): "
               "Step through and Compare proposers replay the recordings.")


def stub(title: str):
    """A page that needs a live model, in lecture mode: one line."""
    def page():
        st.title(title)
        st.info(f"**{title}** {NEEDS_MODEL}", icon=":material/co_present:")
    page.__name__ = "lecture_" + "".join(c if c.isalnum() else "_" for c in title.lower())
    return page


def sidebar() -> None:
    with st.sidebar:
        st.markdown("**Lecture mode**")
        st.caption(f"Recordings from `{folder()}` ({len(files())} found); no model is loaded on this server.")


def pick(kind_label: str, key: str) -> Path | None:
    """A selectbox of the folder's recordings; the one chosen (None: none chosen, or none there)."""
    got = files()
    if not got:
        st.info(f"No recordings in `{folder()}`: download one from {kind_label} on a server with the model, or "
                "write one with `specviz generate --record FILE`, and put it there.")
        return None
    names = ["(choose a recording)"] + [p.name for p in got]
    name = st.selectbox(f"Recordings in {folder()}", names, key=key)
    return None if name == names[0] else folder() / name
