"""The Walkthrough page's logic. Pure modules (no Streamlit): steps.py (the steps, the models, the page's URL),
tensors.py (what each step's statistics and downloads are made of, from a runtime.walkthrough trace), figures.py
(its heatmaps). Streamlit: views.py and attention.py draw one kind of step each; widgets.py holds the model loader
and the page's controls."""
