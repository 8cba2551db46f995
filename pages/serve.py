import streamlit as st

st.title("serve")
st.info("This page is being built.")
