"""Capstone: configure a fleet (four traffic pools, a memory budget, a batch), every pool run for real and scored;
and the session's scorecard of every guess made on any page."""
import streamlit as st

from specviz.ui import capstone, scorecard

st.title("Capstone: configure a fleet")
st.write("You run one server for four kinds of traffic. For each pool pick how it speculates (a method and k, or "
         "none) and predict its tokens/s; the page then runs every pool for real on the model, beside the other "
         "options, and scores each pick against the fastest option that fits your memory budget, and each prediction "
         "against the measured figure. Choose by the workload, not the technique: what is there to copy, what does a "
         "drafter cost, and does it fit?")
capstone.section()
scorecard.section()
