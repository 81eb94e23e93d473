"""`python -m web` (`make web`): build the static folder dist/web/ from web/static/, a model directory's exported
fp32 graphs (and their int8 versions made here by one scheme for every CPU: `portable_int8`) and tokenizer, and
onnxruntime-web's wasm build.

Every large file is stored gzipped (graphs, the wasm binary, the tokenizer) and the page inflates it with the
browser's DecompressionStream: any static host then serves the small bytes, with no server configuration, and the
first load stays under 40 MB with int8 (the raw files are ~54 MB: docs/web.md says why). config.json carries the
model's shape, its special ids, every file's size and the app's input limits and words (web/limits.py).
"""
from __future__ import annotations

import gzip
import hashlib
import importlib.util
import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runtime.model_files import read_model_config, read_tokenizer
from runtime.spec import ONNX_DIR, PRECISIONS, ModelShape, decoder_graph, encoder_graph
from runtime.tokenizer import SPECIALS

from . import ort_package
from .limits import input_limits

ROOT = Path(__file__).resolve().parents[1]
STATIC = Path(__file__).resolve().parent / "static"
MARKER = "tx-web"  # config.json's "built_by": a folder holding it is ours to replace
FIRST_LOAD_LIMIT = 40_000_000  # bytes: the budget for the first load with int8


@dataclass
class BuildOptions:
    model_dir: Path = ROOT / "models" / "translate"  # an exported translator (python -m export MODEL_DIR)
    out: Path = ROOT / "dist" / "web"  # replaced whole on every build
    precisions: tuple[str, ...] = PRECISIONS  # fp32 is only fetched when the page's user picks it
    compresslevel: int = 9  # gzip level of the first load's files (9: the smallest; fp32's graphs get at most 6)
    log: Any = field(default=print)


def gzip_file(source: Path, target: Path, level: int) -> int:
    """target = gzip(source) without a name or time in its header (a rebuild gives the same bytes); its size."""
    with open(source, "rb") as f, open(target, "wb") as raw, \
            gzip.GzipFile(filename="", mode="wb", compresslevel=level, fileobj=raw, mtime=0) as out:
        shutil.copyfileobj(f, out, 1 << 20)
    return target.stat().st_size


def model_config(model_dir: Path) -> dict[str, Any]:
    """The page's view of the model: graph names, sizes, special ids, directions."""
    stored = read_model_config(model_dir, "seq2seq")
    shape = ModelShape.from_config("seq2seq", stored["config"])
    tokenizer = read_tokenizer(model_dir)
    meta = stored["meta"]
    directions = [list(d) for d in meta.get("directions", [["de", "en"], ["en", "de"]])]
    encoder, decoder = encoder_graph(shape), decoder_graph(shape)
    return {
        "n_decoder_layers": shape.n_decoder_layers, "n_heads": shape.n_heads, "head_dim": shape.head_dim,
        "vocab_size": shape.vocab_size, "directions": directions,
        "specials": {name: tokenizer.token_to_id(name) for name in SPECIALS},
        "tags": {tgt: tokenizer.token_to_id(f"<2{tgt}>") for _, tgt in directions},
        "cross_names": encoder.output_names[1:],
        "past_names": [t.name for t in decoder.inputs if t.name.startswith("past_self_")],
        "present_names": [n for n in decoder.output_names if n.startswith("present_self_")],
        "step_attention_names": [n for n in decoder.output_names if n.startswith("step_attn_cross_")],
        "limits": input_limits(meta, int(stored["config"].get("max_len", 256))),
    }


GRAPHS = ("encoder", "decoder")


def fp32_graphs(model_dir: Path) -> list[Path]:
    """The served fp32 graphs: the page's fp32 files, and what its int8 files are made from."""
    return [Path(model_dir) / ONNX_DIR / f"{graph}.fp32.onnx" for graph in GRAPHS]


def portable_int8(model_dir: Path, out_dir: Path) -> list[Path]:
    """The encoder and decoder in int8 by export.quantize.PORTABLE_SCHEME, made from the model's fp32 graphs into
    out_dir: what the page ships whatever the CPU that exported the model chose for itself (a VNNI CPU's blockwise
    files are twice the size and its generator needs VNNI; these run alike everywhere and fit the first load)."""
    from export.quantize import PORTABLE_SCHEME as scheme  # onnx's quantiser: needed by a build only
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    made = []
    for source in fp32_graphs(model_dir):
        target = Path(out_dir) / source.name.replace(".fp32.", ".int8.")
        scheme.quantize(source, target)
        made.append(target)
    return made


def portable_model_dir(model_dir: Path, out_dir: Path) -> Path:
    """A model directory holding what the page runs, for Python onnxruntime (the parity test, `bench web`): the
    model's config and tokenizer, its fp32 graphs (linked) and the page's int8 ones (`portable_int8`)."""
    onnx_dir = Path(out_dir) / ONNX_DIR
    portable_int8(model_dir, onnx_dir)
    for name in ("config.json", "tokenizer.json"):
        shutil.copy(Path(model_dir) / name, Path(out_dir) / name)
    for source in fp32_graphs(model_dir):
        link = onnx_dir / source.name
        if not link.exists():
            link.symlink_to(source.resolve())
    return Path(out_dir)


def inputs_of(options: BuildOptions) -> list[Path]:
    """Every file a build reads: what makes a built folder stale when it is newer (int8 is made from fp32)."""
    quantizer = Path(importlib.util.find_spec("export.quantize").origin)  # the int8 scheme's code (not imported)
    return [*fp32_graphs(options.model_dir), Path(options.model_dir) / "tokenizer.json",
            Path(options.model_dir) / "config.json", quantizer, *STATIC.iterdir(), *Path(__file__).parent.glob("*.py")]


def is_fresh(options: BuildOptions) -> bool:
    """Whether the folder was built after every file it is built from changed (`python -m web --if-stale`)."""
    built = Path(options.out) / "config.json"
    if not built.is_file() or MARKER not in built.read_text(encoding="utf-8"):
        return False
    stamp = built.stat().st_mtime
    return all(path.is_file() and path.stat().st_mtime < stamp for path in inputs_of(options))


def build(options: BuildOptions) -> dict[str, Any]:
    """Write the folder; its config.json (also returned)."""
    model_dir, out, log = Path(options.model_dir), Path(options.out), options.log
    missing = [p for p in fp32_graphs(model_dir) if not p.is_file()]
    if missing:
        raise FileNotFoundError(f"{', '.join(map(str, missing))} missing: run `python -m export {model_dir}` first")
    config = model_config(model_dir)
    if out.exists():
        previous = out / "config.json"
        if any(out.iterdir()) and not (previous.is_file() and MARKER in previous.read_text(encoding="utf-8")):
            raise FileExistsError(f"{out} exists and was not built by `python -m web`: refusing to replace it")
    # Built beside the folder and swapped in at the end: an interrupted build leaves the old folder whole.
    final, out = out, out.parent / f".{out.name}.building"
    if out.exists():
        shutil.rmtree(out)
    (out / "models").mkdir(parents=True)
    for path in sorted(STATIC.iterdir()):
        shutil.copy(path, out / path.name)
    archive = ort_package.tarball(log=log)
    staging = out / ".ort"
    wasm, *_ = [p for p in ort_package.extract(archive, staging) if p.suffix == ".wasm"]
    files: dict[str, dict[str, Any]] = {}

    def add(name: str, source: Path, group: str) -> None:
        target = out / name
        if name.endswith(".gz"):  # fp32 is no part of the first load: a faster level (9 takes minutes on 150 MB)
            level = min(options.compresslevel, 6) if group == "fp32" else options.compresslevel
            size = gzip_file(source, target, level)
        else:
            size = Path(shutil.copy(source, target)).stat().st_size
        files[name] = {"bytes": size, "raw_bytes": source.stat().st_size, "group": group}

    add(f"{wasm.name}.gz", wasm, "runtime")
    for name in ort_package.FILES:
        if not name.endswith(".wasm"):
            add(name, staging / name, "runtime")
    shutil.rmtree(staging)
    add("tokenizer.json.gz", model_dir / "tokenizer.json", "runtime")
    sources = {"fp32": model_dir / ONNX_DIR}
    if "int8" in options.precisions:
        log("quantizing the int8 graphs (export.quantize.PORTABLE_SCHEME)")
        sources["int8"] = out / ".int8"
        portable_int8(model_dir, sources["int8"])
    for precision in options.precisions:
        for graph in GRAPHS:
            log(f"compressing {graph}.{precision}.onnx")
            add(f"models/{graph}.{precision}.onnx.gz", sources[precision] / f"{graph}.{precision}.onnx", precision)
    if "int8" in sources:
        shutil.rmtree(sources["int8"])
    for path in sorted(STATIC.iterdir()):
        files[path.name] = {"bytes": path.stat().st_size, "raw_bytes": path.stat().st_size, "group": "page"}
    config.update(built_by=MARKER, onnxruntime_web=ort_package.VERSION, precisions=list(options.precisions),
                  files=files)
    config["load_bytes"] = {p: sum(f["bytes"] for f in files.values() if f["group"] in ("page", "runtime", p))
                            for p in options.precisions}
    text = json.dumps(config, indent=1)
    (out / "config.json").write_text(text, encoding="utf-8")
    config["load_bytes"] = {p: n + len(text.encode()) for p, n in config["load_bytes"].items()}
    text = json.dumps(config, indent=1)  # the sizes now count config.json itself (a few bytes off at most)
    (out / "config.json").write_text(text, encoding="utf-8")
    version = hashlib.sha256(text.encode()).hexdigest()[:12]  # a new build: the service worker's new cache
    worker = out / "sw.js"
    shell = ["./", "config.json", *(name for name, f in files.items() if f["group"] == "page" and name != "sw.js")]
    worker.write_text(worker.read_text(encoding="utf-8").replace("__BUILD__", version)
                      .replace("__SHELL__", json.dumps(shell)), encoding="utf-8")
    if final.exists():
        shutil.rmtree(final)
    out.rename(final)
    return config


def size_table(config: dict[str, Any]) -> str:
    """The files and the first load per precision, in MB (10^6 bytes)."""
    rows = [f"{name:42} {f['bytes'] / 1e6:8.2f} MB  (raw {f['raw_bytes'] / 1e6:.2f} MB, {f['group']})"
            for name, f in sorted(config["files"].items(), key=lambda kv: -kv[1]["bytes"])]
    rows += [f"first load with {p}: {n / 1e6:.2f} MB" for p, n in config["load_bytes"].items()]
    return "\n".join(rows)
