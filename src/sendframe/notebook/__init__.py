"""Plotly charts and ipywidgets shells over the tested functions (optional stack)."""
