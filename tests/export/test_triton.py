"""python -m export triton: every config.pbtxt must describe its own model.onnx exactly."""
from __future__ import annotations

import os
import re
import shutil
import stat
from pathlib import Path

import onnx
import pytest
from export_fixtures import exported, fresh_copy

from export import triton
from runtime.spec import BATCH

pytestmark = pytest.mark.exports

ONNX_TO_TRITON = {onnx.TensorProto.FLOAT: "TYPE_FP32", onnx.TensorProto.INT64: "TYPE_INT64",
                  onnx.TensorProto.BOOL: "TYPE_BOOL"}
TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+')


# --- a minimal protobuf text-format reader (enough for config.pbtxt) -----------------------------------------------


def parse_pbtxt(text: str) -> dict:
    """Fields -> list of values (every field may repeat); messages become dicts, "strings" str, numbers int."""
    text = "\n".join(line.split("#", 1)[0] if not line.lstrip().startswith("#") else "" for line in text.splitlines())
    tokens = TOKEN.findall(text)
    message, end = _message(tokens, 0, closing=None)
    assert end == len(tokens), f"unparsed tail: {tokens[end:end + 5]}"
    return message


def _message(tokens: list[str], i: int, closing: str | None) -> tuple[dict, int]:
    fields: dict[str, list] = {}
    while i < len(tokens) and tokens[i] != closing:
        name = tokens[i]
        assert re.fullmatch(r"[A-Za-z_]\w*", name), f"bad field name {name!r} at token {i}"
        i += 1
        if tokens[i] == ":":
            i += 1
        values, i = _value(tokens, i)
        fields.setdefault(name, []).extend(values)
    if closing is not None:
        assert i < len(tokens), f"missing {closing!r}"
        i += 1
    return fields, i


def _value(tokens: list[str], i: int) -> tuple[list, int]:
    token = tokens[i]
    if token == "{":
        message, i = _message(tokens, i + 1, closing="}")
        return [message], i
    if token == "[":
        items, i = [], i + 1
        while tokens[i] != "]":
            value, i = _value(tokens, i)
            items += value
            if tokens[i] == ",":
                i += 1
            else:
                assert tokens[i] == "]", f"expected , or ] at token {i}: {tokens[i]!r}"
        return items, i + 1
    if token.startswith('"'):
        return [token[1:-1]], i + 1
    if re.fullmatch(r"-?\d+", token):
        return [int(token)], i + 1
    assert re.fullmatch(r"[A-Z_][A-Z0-9_]*|true|false", token), f"unexpected token {token!r}"
    return [token], i + 1


def test_the_pbtxt_reader_reads_what_it_should():
    parsed = parse_pbtxt('# c\nname: "m"\nmax_batch_size: 8\ninput [ { name: "a" dims: [ -1, 4 ] }, '
                         '{ name: "b" dims: [ 2 ] } ]\ndynamic_batching { }\np { key: "k" value: { s: "1" } }\n')
    assert parsed == {"name": ["m"], "max_batch_size": [8],
                      "input": [{"name": ["a"], "dims": [-1, 4]}, {"name": ["b"], "dims": [2]}],
                      "dynamic_batching": [{}], "p": [{"key": ["k"], "value": [{"s": ["1"]}]}]}
    for broken in ('input [ { name: "a" }', 'name: "a" }', "dims: [ 1 2 ]", 'name "a" "b"'):
        with pytest.raises((AssertionError, IndexError)):
            parse_pbtxt(broken)


# --- the repository ------------------------------------------------------------------------------------------------


def graph_io(path: Path) -> tuple[list, list]:
    model = onnx.load(str(path))
    initializers = {i.name for i in model.graph.initializer}
    return [v for v in model.graph.input if v.name not in initializers], list(model.graph.output)


def dims_of(value) -> list:
    return [d.dim_param or d.dim_value for d in value.type.tensor_type.shape.dim]


def assert_config_matches_graph(folder: Path) -> dict:
    """The config's name, platform, batching, and every input/output's name, type and dims, from the graph."""
    config = parse_pbtxt((folder / "config.pbtxt").read_text(encoding="utf-8"))
    model_path = folder / "1" / "model.onnx"
    assert model_path.is_file()
    onnx.checker.check_model(str(model_path), full_check=True)
    assert config["name"] == [folder.name]
    assert config["platform"] == ["onnxruntime_onnx"]
    inputs, outputs = graph_io(model_path)
    [max_batch] = config["max_batch_size"]
    if max_batch > 0:  # Triton's batch dim must be the graph's dynamic first axis, in every input and output
        assert all(dims_of(v)[0] == BATCH for v in inputs + outputs)
    for role, values in (("input", inputs), ("output", outputs)):
        declared = config[role]
        assert [d["name"] for d in declared] == [[v.name] for v in values], role
        for entry, value in zip(declared, values, strict=True):
            assert entry["data_type"] == [ONNX_TO_TRITON[value.type.tensor_type.elem_type]], value.name
            dims = [d if isinstance(d, int) and d > 0 else -1 for d in dims_of(value)]
            assert entry["dims"] == (dims[1:] if max_batch > 0 else dims), value.name
    return config


@pytest.fixture(scope="module")
def repository(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("triton") / "model_repository"
    logged = []
    folders = triton.write_repository([exported("translate"), exported("sentiment")], out, log=logged.append)
    assert len(folders) == len(logged) == 6
    return out


def test_one_folder_per_graph(repository):
    assert sorted(p.name for p in repository.iterdir()) == [
        "sentiment_classifier", "sentiment_classifier_explain", "translate_decoder", "translate_decoder_explain",
        "translate_encoder", "translate_encoder_explain"]
    for folder in repository.iterdir():
        assert sorted(p.name for p in (folder / "1").iterdir()) == ["model.onnx"]


def test_every_config_matches_its_graph(repository):
    configs = {folder.name: assert_config_matches_graph(folder) for folder in sorted(repository.iterdir())}
    assert len(configs) == 6
    dynamic = {name for name, config in configs.items() if "dynamic_batching" in config}
    assert dynamic == {"sentiment_classifier", "sentiment_classifier_explain", "translate_encoder",
                       "translate_encoder_explain"}
    assert {name: config["max_batch_size"][0] for name, config in configs.items() if name not in dynamic} == {
        "translate_decoder": 256, "translate_decoder_explain": 256}  # client-batched: sentences x beams
    assert all(configs[name]["max_batch_size"] == [32] for name in dynamic)
    decoder = {entry["name"][0]: entry["dims"] for entry in configs["translate_decoder"]["input"]}
    assert decoder["tokens"] == [-1] and decoder["past_self_k_0"] == [4, -1, 8]  # (heads, past_len, head_dim)
    outputs = {entry["name"][0]: entry for entry in configs["sentiment_classifier"]["output"]}
    assert outputs["logits"]["dims"] == [2] and outputs["logits"]["label_filename"] == ["labels.txt"]


def test_models_are_byte_copies_of_the_exported_files_and_labels_fit(repository):
    for folder, source in (("translate_decoder", exported("translate") / "onnx" / "decoder.fp32.onnx"),
                           ("sentiment_classifier", exported("sentiment") / "onnx" / "classifier.fp32.onnx")):
        assert (repository / folder / "1" / "model.onnx").read_bytes() == source.read_bytes()
    labels = (repository / "sentiment_classifier" / "labels.txt").read_text(encoding="utf-8").splitlines()
    assert labels == ["negative", "positive"]
    assert not (repository / "translate_encoder" / "labels.txt").exists()


def test_int8_lean_cpu_options(tmp_path):
    out = tmp_path / "repo"
    assert triton.main([str(exported("sentiment")), "--out", str(out), "--precision", "int8", "--lean",
                        "--device", "cpu", "--instances", "2", "--threads", "3", "--max-batch-size", "8",
                        "--queue-delay-us", "250", "--prefix", "reviews"]) == 0
    assert [p.name for p in out.iterdir()] == ["reviews_classifier"]
    folder = out / "reviews_classifier"
    assert (folder / "1" / "model.onnx").read_bytes() == \
        (exported("sentiment") / "onnx" / "classifier.int8.onnx").read_bytes()
    config = assert_config_matches_graph(folder)
    assert config["max_batch_size"] == [8]
    assert config["dynamic_batching"] == [{"max_queue_delay_microseconds": [250]}]
    assert config["instance_group"] == [{"count": [2], "kind": ["KIND_CPU"]}]
    parameters = {p["key"][0]: p["value"][0]["string_value"][0] for p in config["parameters"]}
    assert parameters == {"intra_op_thread_count": "3", "inter_op_thread_count": "1"}


def test_no_batch_dim_when_max_batch_size_is_zero(tmp_path):
    out = tmp_path / "repo"
    assert triton.main([str(exported("translate")), "--out", str(out), "--max-batch-size", "0", "--lean"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["translate_decoder", "translate_encoder"]
    for folder in out.iterdir():
        config = assert_config_matches_graph(folder)
        assert config["max_batch_size"] == [0] and "dynamic_batching" not in config
        assert config["input"][0]["dims"] == [-1, -1]  # (batch, length), both variable


def test_rewriting_replaces_a_model_folder(tmp_path):
    out = tmp_path / "repo"
    triton.main([str(exported("sentiment")), "--out", str(out), "--lean"])
    stray = out / "sentiment_classifier" / "2"
    stray.mkdir()
    assert triton.main([str(exported("sentiment")), "--out", str(out), "--lean", "--precision", "int8"]) == 0
    assert not stray.exists()
    assert (out / "sentiment_classifier" / "1" / "model.onnx").read_bytes() == \
        (exported("sentiment") / "onnx" / "classifier.int8.onnx").read_bytes()


def test_errors_name_the_file_and_the_fix(tmp_path, capsys):
    model_dir = fresh_copy("translate", "triton-missing")
    (model_dir / "onnx" / "decoder.int8.onnx").unlink()
    assert triton.main([str(model_dir), "--out", str(tmp_path / "repo"), "--precision", "int8"]) == 2
    err = capsys.readouterr().err
    assert "decoder.int8.onnx: ONNX file not found" in err and f"python -m export {model_dir}" in err
    assert not (tmp_path / "repo").exists()  # nothing written when a file is missing
    shutil.copyfile(model_dir / "onnx" / "encoder.fp32.onnx", model_dir / "onnx" / "decoder.fp32.onnx")
    assert triton.main([str(model_dir), "--out", str(tmp_path / "repo")]) == 2
    assert "does not match the decoder interface" in capsys.readouterr().err
    assert triton.main([str(tmp_path / "nowhere"), "--out", str(tmp_path / "repo")]) == 2
    assert "config.json" in capsys.readouterr().err
    assert triton.main([str(exported("sentiment")), str(exported("sentiment")), "--out", str(tmp_path / "r")]) == 2
    assert "same Triton model names" in capsys.readouterr().err


def test_client_batched_graphs_get_their_own_limit_and_files_are_readable(tmp_path):
    out = tmp_path / "repo"
    assert triton.main([str(exported("translate")), "--out", str(out), "--lean", "--client-batch-size", "64"]) == 0
    encoder = assert_config_matches_graph(out / "translate_encoder")
    decoder = assert_config_matches_graph(out / "translate_decoder")
    assert encoder["max_batch_size"] == [32] and "dynamic_batching" in encoder
    assert decoder["max_batch_size"] == [64] and "dynamic_batching" not in decoder
    umask = os.umask(0)
    os.umask(umask)
    for path in (out / "translate_decoder" / "config.pbtxt", out / "translate_decoder" / "1" / "model.onnx"):
        # plain umask permissions (not mkstemp's 0600): the server often runs as another user
        assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask
