"""The Latency page: report.py turns a measurement into its table, captions and figure (no Streamlit);
measure.py times the systems; pytorch.py is the optional PyTorch column (torch imported only where installed);
widgets.py draws the page's parts."""
