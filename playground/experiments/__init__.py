"""The Experiments page's logic. Pure modules (no Streamlit): link.py (the page's URL, corrected when malformed),
checks.py (bad input in words), compare.py (edit and compare), figures.py (Vega-Lite specs), views.py (each
experiment's Report), report.py (SVG / PNG / CSV / HTML files). Streamlit: widgets.py, engine_widgets.py."""
