"""python -m web's builder, fast (no browser, no export, no registry): the folder it writes from a model directory
and a stand-in onnxruntime-web tarball, the sha256 pin, the app's limits and words in config.json."""
from __future__ import annotations

import gzip
import hashlib
import io
import json
import shutil
import tarfile
from pathlib import Path

import pytest

from playground.translate.result_words import truncation_warning
from runtime import coverage
from runtime.text import Translation
from web import build as web_build
from web import limits, ort_package

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def fake_tarball(tmp_path, monkeypatch):
    """A tarball holding package/dist/<each file the page needs>, served by tarball()."""
    path = tmp_path / "ort.tgz"
    with tarfile.open(path, "w:gz") as tar:
        for name in ort_package.FILES:
            data = f"// {name}\n".encode() * 50
            info = tarfile.TarInfo(f"package/dist/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    monkeypatch.setattr(ort_package, "tarball", lambda log=print: path)
    return path


@pytest.fixture
def fake_quantizer(monkeypatch):
    """portable_int8 as a stand-in: each fp32 stand-in file's bytes with "int8" after them (no onnx needed)."""
    def portable_int8(model_dir, out_dir):
        Path(out_dir).mkdir(parents=True, exist_ok=True)
        for source in web_build.fp32_graphs(model_dir):
            (Path(out_dir) / source.name.replace(".fp32.", ".int8.")).write_bytes(source.read_bytes() + b"int8")
    monkeypatch.setattr(web_build, "portable_int8", portable_int8)


@pytest.fixture
def model_dir(tmp_path):
    """The shipped translator's config and tokenizer, with stand-in fp32 graph files (the builder copies them, and
    its int8 files come from them: fake_quantizer)."""
    model = tmp_path / "model"
    (model / "onnx").mkdir(parents=True)
    for name in ("config.json", "tokenizer.json"):
        shutil.copy(ROOT / "models/translate" / name, model / name)
    for graph in ("encoder", "decoder"):
        (model / "onnx" / f"{graph}.fp32.onnx").write_bytes(f"{graph} fp32".encode() * 1000)
    return model


def test_the_folder_holds_the_page_the_runtime_and_the_gzipped_graphs(fake_tarball, fake_quantizer, model_dir,
                                                                      tmp_path):
    out = tmp_path / "dist"
    options = web_build.BuildOptions(model_dir=model_dir, out=out, compresslevel=1, log=lambda _: None)
    config = web_build.build(options)
    assert json.loads((out / "config.json").read_text()) == config
    graph = gzip.decompress((out / "models/decoder.int8.onnx.gz").read_bytes())
    assert graph == (model_dir / "onnx/decoder.fp32.onnx").read_bytes() + b"int8"  # made from fp32, not copied
    assert gzip.decompress((out / "models/decoder.fp32.onnx.gz").read_bytes()) == \
        (model_dir / "onnx/decoder.fp32.onnx").read_bytes()
    assert not (out / ".int8").exists()
    assert json.loads(gzip.decompress((out / "tokenizer.json.gz").read_bytes()))["model"]["type"] == "BPE"
    assert not (out / "ort-wasm-simd-threaded.wasm").exists()  # only its gzipped copy: the page inflates it
    for name, entry in config["files"].items():  # sw.js gets its build id and list after config.json is written
        assert (out / name).stat().st_size == entry["bytes"] or name == "sw.js", name
    page_and_runtime = sum(f["bytes"] for f in config["files"].values() if f["group"] in ("page", "runtime"))
    assert config["load_bytes"]["int8"] > page_and_runtime + config["files"]["models/encoder.int8.onnx.gz"]["bytes"]
    assert config["specials"]["</s>"] == 2 and set(config["tags"]) == {"en", "de"}
    assert len(config["cross_names"]) == 2 * config["n_decoder_layers"]
    # the service worker: a cache per build, and every page file stored at install
    worker = (out / "sw.js").read_text()
    assert "__BUILD__" not in worker and "__SHELL__" not in worker
    shell = json.loads(worker.split("const SHELL = ", 1)[1].split(";", 1)[0])
    assert {p.name for p in web_build.STATIC.iterdir()} - {"sw.js"} <= set(shell)
    assert web_build.is_fresh(options)
    (model_dir / "onnx/encoder.fp32.onnx").write_bytes(b"newer")
    assert not web_build.is_fresh(options)
    web_build.build(options)  # a folder it built is replaced; any other is refused
    (out / "config.json").write_text("{}")
    with pytest.raises(FileExistsError):
        web_build.build(options)


def test_a_missing_export_is_named_with_its_fix(fake_tarball, fake_quantizer, model_dir, tmp_path):
    (model_dir / "onnx/decoder.fp32.onnx").unlink()
    with pytest.raises(FileNotFoundError, match="python -m export"):
        web_build.build(web_build.BuildOptions(model_dir=model_dir, out=tmp_path / "dist", log=lambda _: None))


def test_a_tarball_that_is_not_the_pinned_one_is_refused(tmp_path):
    served = tmp_path / "served" / "onnxruntime-web-0.0.0.tgz"
    served.parent.mkdir()
    served.write_bytes(b"not the package")
    cache = tmp_path / "cache"
    with pytest.raises(ort_package.PackageError, match="not the pinned"):
        ort_package.tarball(cache, served.as_uri(), "0" * 64, log=lambda _: None)
    assert list(cache.iterdir()) == []
    right = hashlib.sha256(b"not the package").hexdigest()
    assert ort_package.tarball(cache, served.as_uri(), right, log=lambda _: None).read_bytes() == b"not the package"


def test_the_limits_and_words_are_the_apps():
    found = limits.input_limits({"max_src_len": 128}, 256)
    assert found["source_room"] == 126 and found["max_target_len"] == 256
    cut = Translation(text="", tokens=[], token_ids=[], score=0.0, src_tokens=[], truncated=True)
    assert found["words"]["truncated"] == truncation_warning([cut], 128)
    assert found["words"]["script"].replace("{percent}", "75%") == coverage.warning(coverage.Coverage(0.0, 0.75, 4))
    assert found["words"]["unknown"].replace("{percent}", "40%") == coverage.warning(coverage.Coverage(0.4, 0.0, 4))
    # the Translate page's words for empty text live in a Streamlit helper: still these
    assert limits.EMPTY_WORDS in (ROOT / "playground/models.py").read_text(encoding="utf-8")
    latin = [chr(c) for a, b in found["latin_letters"] for c in range(a, b + 1)]
    assert {"a", "ß", "Ä", "ẞ"} <= set(latin) and "я" not in latin and "1" not in latin


@pytest.mark.exports
def test_the_pages_int8_is_the_portable_scheme_whatever_this_cpu_exports(tmp_path):
    """The page's int8 graphs: unsigned per-row MatMulIntegers with int8 embedding tables (the smallest, and the same
    sums on every CPU), made from the fp32 graphs, even where this CPU's own export is another scheme."""
    import onnx
    from export_fixtures import exported

    from export.quantize import META_INT8_BLOCK_SIZE, META_INT8_EMBEDDINGS, META_INT8_WEIGHT_TYPE
    made = web_build.portable_int8(exported("translate"), tmp_path)
    assert [p.name for p in made] == ["encoder.int8.onnx", "decoder.int8.onnx"]
    for path in made:
        graph = onnx.load(str(path), load_external_data=False)
        meta = {p.key: p.value for p in graph.metadata_props}
        assert (meta[META_INT8_WEIGHT_TYPE], meta[META_INT8_BLOCK_SIZE], meta[META_INT8_EMBEDDINGS]) == \
            ("uint8", "0", "int8"), path.name
        ops = {n.op_type for n in graph.graph.node}
        assert "MatMulInteger" in ops and "MatMulNBits" not in ops, path.name


@pytest.mark.slow
def test_the_shipped_translators_first_load_with_int8_is_at_most_40_mb(tmp_path):
    """On the shipped translator's export: models/ where `make run` made it, else the tests' cached copy (a fresh
    clone, as in CI), so the budget is checked there too, whatever int8 scheme this CPU's export chose."""
    from shipped_fixtures import shipped_models_root
    model = shipped_models_root() / "translate"
    try:
        ort_package.tarball(log=lambda _: None)
    except ort_package.PackageError as e:
        pytest.skip(f"onnxruntime-web is not cached and the npm registry does not answer: {e}")
    config = web_build.build(web_build.BuildOptions(model_dir=model, out=tmp_path / "dist", precisions=("int8",),
                                                    log=lambda _: None))
    print(f"\n{web_build.size_table(config)}")
    assert config["load_bytes"]["int8"] <= web_build.FIRST_LOAD_LIMIT
