import streamlit as st

st.title("step_through")
st.info("This page is being built.")
