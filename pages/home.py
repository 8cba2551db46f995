import streamlit as st

st.title("specviz")
st.write("Speculative decoding on a real small language model, step by step. (Pages are being built.)")
