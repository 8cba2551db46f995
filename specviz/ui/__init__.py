"""Streamlit support: cached models, session state, sidebar, launch."""
