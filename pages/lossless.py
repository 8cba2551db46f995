import streamlit as st

st.title("lossless")
st.info("This page is being built.")
