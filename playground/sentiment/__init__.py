"""The Sentiment page's logic: what a label's probability means and what a negation warns of (notes.py,
negation.py), the batch's summary (batch.py), all pure; the page's result blocks (widgets.py)."""
