"""The Attention explorer's logic: which maps a kind of attention reads, what is known of the output shown, the
figures and the positional encoding's choices (maps.py, pure); running the model and drawing the maps
(widgets.py)."""
