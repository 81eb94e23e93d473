"""The playground as a client of the service (serve/, `make serve`): when TX_SERVE_URL is set, Translate and
Sentiment send their texts there instead of loading models in the Streamlit process, and the Latency page adds a
"served (HTTP)" column. client.py speaks HTTP (no Streamlit); widgets.py picks served or local for a page."""
