"""The Decoding explorer's logic. Pure modules (no Streamlit): run.py decodes one input once (greedy with each
step's log-probs, beam search with its tree), numbers.py turns the stored numbers into the page's words, tables and
downloads, figures.py draws them, link.py reads and writes the page's URL. widgets.py holds the page's Streamlit
pieces (the cached run, the sliders, the three-way comparison)."""
