import streamlit as st

st.title("breakeven")
st.info("This page is being built.")
