"""What the Streamlit pages share, by job: `models` (where the models are, loading once per process, friendly
load errors), `inputs` (text in, examples, CSV in and out), `cards` (metrics.json, reports, the model card,
confidence), `figures` (plotly). Pages import this package as `pg` and stay short flat scripts over it and the
inference API (`export.runtime`; PyTorch through `tx.inference` on the Latency page). No model code here.
"""
from .cards import *  # noqa: F403
from .figures import *  # noqa: F403
from .inputs import *  # noqa: F403
from .models import *  # noqa: F403
