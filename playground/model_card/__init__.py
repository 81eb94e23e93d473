"""The Model card page and Home's one line per model. Pure (no Streamlit): card_text.py (the card's words and
tables), export_report.py (export_report.json, typed), sentiment_files.py (baselines and calibration), weights.py
(model.pt's parameter count without torch). sources.py reads a model directory; widgets.py draws the sections."""
