import streamlit as st

st.title("pitfalls")
st.info("This page is being built.")
