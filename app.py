"""Transformer playground: home page (placeholder until the app issue lands)."""
import streamlit as st

st.set_page_config(page_title="Transformer playground", layout="wide")
st.title("Transformer playground")
st.write("A from-scratch Transformer (`tx`), its ONNX export and onnxruntime inference. Pages arrive with the app issue.")
