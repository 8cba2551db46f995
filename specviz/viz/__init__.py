"""Plotly figures built from step records and formulas: pure, testable without Streamlit."""
