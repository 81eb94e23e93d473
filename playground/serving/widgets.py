"""Served or in-process, for a page: the one call Translate and Sentiment make for their model, and the Latency
page's "served (HTTP)" column."""
from __future__ import annotations

from typing import Any

import streamlit as st

from .. import models
from . import client

LATENCY_COLUMN = "served (HTTP)"


@st.cache_data(ttl=15, show_spinner=False)
def _info(url: str) -> dict[str, Any]:
    """The service's GET /info, asked again after 15 s (a restarted service may load other precisions)."""
    return client.Service(url).info()


def model(task: str, provider: str, precision: str):
    """The task's model on the service when TX_SERVE_URL is set (None after saying why it cannot be reached),
    else `models.onnx_model` in this process. The service runs on its own provider: `provider` is not sent."""
    url = client.service_url()
    if url is None:
        return models.onnx_model(task, provider, precision)
    try:
        return client.served_model(task, url, precision, _info(url))
    except client.ServiceError as e:
        st.error(f"{e}.")
        return None


def latency_systems(task: str) -> dict[str, Any]:
    """{"served (HTTP) <precision>": the served model} when TX_SERVE_URL is set and answers, else {}: one more
    column beside in-process onnxruntime and PyTorch, the network hop's cost on one request at a time."""
    url = client.service_url()
    if url is None:
        return {}
    try:
        info = _info(url)
        precision = "fp32" if "fp32" in info[task]["precisions"] else info[task]["precisions"][0]
        return {f"{LATENCY_COLUMN} {precision}": client.served_model(task, url, precision, info)}
    except client.ServiceError as e:
        st.warning(f"The served column is left out: {e}.")
        return {}
