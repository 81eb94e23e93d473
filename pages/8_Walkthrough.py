"""Walkthrough: one input through the shipped model, step by step, with the numbers onnxruntime computes (graphs
that expose every intermediate tensor). The model runs once per input; steps, layers and heads redraw from the
stored numbers."""
import streamlit as st

from playground import inputs, models, widgets
from playground import walkthrough as wt
from playground import walkthrough_attention as attention_views
from playground import walkthrough_steps as steps_of
from playground import walkthrough_views as views

models.page_setup("Walkthrough")
st.title("Walkthrough: one sentence through the Transformer")
st.caption("Every number on this page is computed by the served model (onnxruntime, fp32, CPU) for your input. "
           "Pick a step; the layer, head and position choices redraw at once without running the model again.")

if "walkthrough_url_read" not in st.session_state:  # a shared link: its values become the widgets' first values
    st.session_state["walkthrough_url_read"] = True
    for name, value in steps_of.parse_url(dict(st.query_params)).items():
        st.session_state[f"walkthrough_{name}"] = value


def another_model_another_text() -> None:
    """A new model starts from its own default text (a German sentence means nothing to the EN→DE translator)."""
    st.session_state.pop("walkthrough_text", None)


choice = st.radio("Model", steps_of.offered(models.directions()), format_func=steps_of.model_label,
                  key="walkthrough_model", horizontal=True, on_change=another_model_another_text)
task = "sentiment" if choice == "sentiment" else "translate"
if models.model_problem(task):
    st.error(models.model_problem(task))
    st.stop()
try:
    with st.spinner("Loading the walkthrough graphs…"):
        model = wt.walkthrough_model(task)
except Exception as e:  # ModelLoadError says which command makes the missing graphs
    models.show_error(e, task)
    st.stop()

if task == "translate":
    direction = steps_of.direction_of(choice)
    default = widgets.greedy_right_example(model.translator, direction, str(models.model_dir(task)),
                                            models.stamp(task, "examples.tsv"))
else:
    default = (inputs.examples("sentiment", "text") or ["a gem of a film, warm and funny"])[0]
st.session_state.setdefault("walkthrough_text", default)
text = st.text_input("Text (press Enter to run it through the model)", key="walkthrough_text")
state = {"model": choice, "text": text}
if not text or not text.strip():
    st.info("Type a sentence to walk it through the model.")
    st.query_params.from_dict(steps_of.url_of(state))
    st.stop()

trace_key = (choice, text.strip(), models.stamp(task))
if st.session_state.get("walkthrough_trace", (None,))[0] != trace_key:
    try:
        with st.spinner("Running the sentence through the model…"):
            st.session_state["walkthrough_trace"] = (trace_key, wt.run(model, choice, text.strip()))
    except Exception as e:
        models.show_error(e, task)
        st.stop()
trace = st.session_state["walkthrough_trace"][1]
if trace.truncated:
    st.warning("Input too long: it was truncated to the model's length limit; the steps show what the model saw.")
if trace.warning:
    st.warning(trace.warning)
if task == "translate":
    st.info(f"Greedy translation: **{trace.text or '(empty output)'}** — the decoder steps below are walked over "
            "<s> + this output, so position t shows the distribution the output's token t was chosen from.")
    st.page_link("pages/6_Decoding_explorer.py", label="The same sentence under sampling and beam search "
                 "(Decoding explorer)", icon="🌳", query_params={"direction": "-".join(direction), "text": text})

steps = steps_of.steps_for(choice)
keys = [s.key for s in steps]
if st.session_state.get("walkthrough_step") not in keys:
    st.session_state["walkthrough_step"] = keys[0]


def move(by: int) -> None:
    at = keys.index(st.session_state["walkthrough_step"])
    st.session_state["walkthrough_step"] = keys[max(0, min(len(keys) - 1, at + by))]


back, pick, forward = st.columns([1, 6, 1], vertical_alignment="bottom")
back.button("◀ Back", key="walkthrough_back", on_click=move, args=(-1,), width="stretch")
forward.button("Next ▶", key="walkthrough_next", on_click=move, args=(1,), width="stretch")
key = pick.selectbox("Step", keys, key="walkthrough_step",
                     format_func=lambda k: f"{keys.index(k) + 1}/{len(keys)} · {steps[keys.index(k)].title}")
step = steps[keys.index(key)]
state["step"] = key

config = models.model_meta(task)["config"]
view = {"layer": 0, "head": 0, "query": 0, "position": 0}
controls = st.columns(4)
if step.kind in ("attention", "scores", "heads", "norm", "ffn"):
    layers = config.get("n_decoder_layers") or config["n_layers"] if step.stack.startswith("dec") \
        else config["n_layers"]
    st.session_state["walkthrough_layer"] = min(st.session_state.get("walkthrough_layer", 1), layers)
    view["layer"] = controls[0].slider("Layer", 1, layers, key="walkthrough_layer") - 1 if layers > 1 else 0
    state["layer"] = view["layer"] + 1
if step.kind in ("attention", "scores", "heads"):
    heads = config["n_heads"]
    st.session_state["walkthrough_head"] = min(st.session_state.get("walkthrough_head", 1), heads)
    view["head"] = controls[1].slider("Head", 1, heads, key="walkthrough_head") - 1
    state["head"] = view["head"] + 1
if step.kind == "scores":
    queries = wt.tokens_of(trace, "dec" if step.stack.startswith("dec") else "enc")
    st.session_state["walkthrough_query"] = min(st.session_state.get("walkthrough_query", 0), len(queries) - 1)
    view["query"] = controls[2].selectbox("Query row in detail", range(len(queries)),
                                          format_func=lambda i: f"{i}: {queries[i]}", key="walkthrough_query") or 0
    state["query"] = view["query"]
if step.kind == "output":
    positions = wt.tokens_of(trace, "dec")
    st.session_state["walkthrough_position"] = min(st.session_state.get("walkthrough_position", 0), len(positions) - 1)
    view["position"] = controls[0].selectbox("Decoder position t", range(len(positions)),
                                             format_func=lambda i: f"{i}: after {positions[i]}",
                                             key="walkthrough_position") or 0
    state["position"] = view["position"]
st.query_params.from_dict(steps_of.url_of(state))

st.subheader(step.title)
st.latex(step.formula)
st.caption(f"Paper: {step.section}")
st.markdown(step.look)
if step.kind == "tokens":
    views.show_tokens(trace, step, view)
elif step.kind == "embedding":
    views.show_embedding(trace, step, view)
elif step.kind == "positions":
    views.show_positions(trace, step, view)
elif step.kind == "attention":
    attention_views.show_qkv(trace, step, view)
elif step.kind == "scores":
    attention_views.show_scores(trace, step, view)
elif step.kind == "heads":
    attention_views.show_heads(trace, step, view)
elif step.kind == "norm":
    views.show_norm(trace, step, view, bool(config.get("pre_norm")))
elif step.kind == "ffn":
    views.show_ffn(trace, step, view)
elif step.kind == "output":
    views.show_output(trace, step, view, model)
elif step.kind == "pool":
    views.show_pool(trace, step, view, config.get("pooling", "mean"))
elif step.kind == "head":
    views.show_head(trace, step, view, float(config.get("temperature", 1.0)))
st.caption("This page's link holds the model, the text, the step and the layer/head/position: share it to show "
           "this view.")
