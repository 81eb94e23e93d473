"""The Translate page's logic: the sidebar's settings (settings.py), the verdict wording and result table
(verdicts.py), the cross-attention figure (cross.py), all pure; the page's result blocks (widgets.py)."""
