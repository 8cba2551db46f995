"""The session's scorecard on the page: every guess scored so far (any page, the walkthrough, the interview, the
labs), how many within tolerance at each level, and the whole of it to download as JSON or CSV."""
from __future__ import annotations

from dataclasses import asdict

import pandas as pd
import streamlit as st

from specviz.teach import scorecard as SC
from specviz.ui import guess as G


def section() -> None:
    st.header("Your scorecard")
    st.write("Every guess scored in this browser session, on any page: the walkthrough's stops, the interview's "
             "questions (at the depth you chose), the labs and this page. A guess is within tolerance when it is "
             "within the band its question states (a share of the measured value, or a fixed distance).")
    entries = G.card()
    if not entries:
        st.info("No guess scored yet in this session: lock a guess on any page and measure it.")
        return
    t = SC.tally(entries)
    c = st.columns(1 + len(t["levels"]))
    c[0].metric("within tolerance", f"{t['close']} of {t['total']}")
    for col, (level, (close, total)) in zip(c[1:], t["levels"].items()):
        col.metric(level, f"{close} of {total}")
    st.dataframe(pd.DataFrame([asdict(e) for e in entries], columns=SC.COLUMNS), hide_index=True, width="stretch")
    d = st.columns(2)
    d[0].download_button("Download as JSON", SC.to_json(entries), "specviz_scorecard.json", "application/json",
                         key="sc_json")
    d[1].download_button("Download as CSV", SC.to_csv(entries), "specviz_scorecard.csv", "text/csv", key="sc_csv")
    st.caption("Kept for this session only (closing the tab forgets it). Each row names the experiment its guess "
               "was scored against, as the page named it when the guess was locked.")
