import streamlit as st

st.title("experiments")
st.info("This page is being built.")
