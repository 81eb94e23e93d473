"""The Translate page's logic: the sidebar's settings (settings.py), the verdict wording and result table
(verdicts.py), both pure; the page's result blocks (widgets.py)."""
