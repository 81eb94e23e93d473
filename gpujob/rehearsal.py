"""Both GPU windows rehearsed on the CPU, call by call, so that a real window runs code that has run end to end.

Two scratch copies of what the device tool would send (tracked files and untracked files git does not ignore, the
shipped weights left out as slim leaves them out): `here`, where the pieces are prepared as before a window and the
returns unpacked after it, and `device`, which plays the GPU machine's checkout. As the device tool does, `device`
is laid anew before every call: deleted, then the tree and that call's carry copied in, so nothing a call left in
the checkout survives to the next (a run's weights can be lost that way); only the scratch's `work` folder, playing
/tmp/gpujob, is kept between the calls of a window. For each planned call, in order: the tree plus carry measured
against 64 MiB, its command (gpujob/plan.py's, unchanged but for what only the GPU machine has) run in `device` with
$OUT set, and $OUT checked against what one call may bring back (8 files, 16 MiB each, 64 MiB).
Then the translate window's returns are unpacked, the candidate evaluated against a copy of the shipped translator,
and the ship decision made into that copy: the real models/ is never written.

What the rehearsal fakes, and a real window needs: the corpus (a synthetic one here, in the layout of `make data`:
a real window needs `make data` + `python -m gpujob pack`), the run's size and time (a tiny model for `max_time`
`TINY_SECONDS`, fp32 on the CPU; the real run is configs/translate-v2.json on CUDA in bf16), the wheel (a tiny
probe wheel in onnxruntime-gpu's place: the real one is `make gpujob`'s), the shipped translator in the cuda window
(the tiny candidate in its seat, as if v2 had shipped: it exports in seconds), the GPU itself (the proof runs with
the CPU provider in CUDA's seat, --allow-cpu, on a few sentences), and /tmp/site (a folder of the scratch).
"""
from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runtime.model_files import CONFIG_FILE, TOKENIZER_FILE, WEIGHTS_FILE

from .handback import DEVICE_RETURN
from .layout import DEFAULT_WORK, SITE_DIR
from .pieces import MiB, sha256_of
from .plan import LIMIT_BYTES, V2_CONFIG, PlannedCall, Window, windows
from .runs import PLANNED_CONFIGS
from .slim import PATTERNS
from .tree import folder_size, git, listed, size_of

TINY_SECONDS = 25.0  # the rehearsal run's max_time: long enough for a few evaluations on a busy CPU
TINY_MODEL = {"vocab_size": 200, "d_model": 64, "n_heads": 2, "n_layers": 1, "n_decoder_layers": 1, "d_ff": 128,
              "max_len": 32, "dropout": 0.0}
SHARD_MIB, RETURN_MIB = 0.05, 0.17  # scaled so the tiny weights come back in two returns, as the real 76 MiB do
HEADER = ["de", "en", "kind", "source"]
NOUNS = [("Hund", "dog"), ("Katze", "cat"), ("Haus", "house"), ("Baum", "tree"), ("Wagen", "car"),
         ("Garten", "garden"), ("Vogel", "bird"), ("Tisch", "table")]
ADJECTIVES = [("groß", "big"), ("klein", "small"), ("alt", "old"), ("schön", "beautiful"), ("grün", "green")]


def write_tsv(path: Path, rows: list[list[str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join("\t".join(r) for r in [HEADER, *rows]) + "\n", encoding="utf-8")


def synthetic_corpus(folder: Path) -> Path:
    """train/valid/test/docs_valid/docs_test.tsv + manifest.json in the layout of data/processed/translate, two
    sources so that the mix has work to do."""
    rows = []
    for de_n, en_n in NOUNS:
        for de_a, en_a in ADJECTIVES:
            rows.append([f"Der {de_n} ist {de_a}.", f"The {en_n} is {en_a}.", "sentence", "ding"])
            rows.append([f"ein {de_a}er {de_n}", f"a {en_a} {en_n}", "phrase", "catalogs"])
    random.Random(0).shuffle(rows)
    sentences = [r for r in rows if r[2] == "sentence"]
    held = {r[0] for r in sentences[:16]}
    write_tsv(folder / "train.tsv", [r for r in rows if r[0] not in held])
    for name, part in (("valid", sentences[:4]), ("test", sentences[4:8]), ("docs_valid", sentences[8:12]),
                       ("docs_test", sentences[12:16])):
        write_tsv(folder / f"{name}.tsv", part)
    (folder / "manifest.json").write_text(json.dumps({"source": "synthetic rehearsal corpus", "version": "1"}))
    return folder


def probe_wheel(folder: Path) -> Path:
    """A real, tiny wheel (one module) that pip installs: onnxruntime-gpu's stand-in."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "gpujobprobe-1.0-py3-none-any.whl"
    files = {"gpujobprobe/__init__.py": "VALUE = 45\n" + "# padding\n" * 400,
             "gpujobprobe-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: gpujobprobe\nVersion: 1.0\n",
             "gpujobprobe-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                                                "Tag: py3-none-any\n"}
    record = "".join(f"{name},,\n" for name in files) + "gpujobprobe-1.0.dist-info/RECORD,,\n"
    with zipfile.ZipFile(path, "w") as z:
        for name, text in {**files, "gpujobprobe-1.0.dist-info/RECORD": record}.items():
            z.writestr(name, text)
    return path


def travelling_files(repo: Path) -> list[str]:
    """What the device tool sends from the checkout, slim on: tracked and untracked-not-ignored, less the weights."""
    weights = set(listed(repo, "--cached", "--", *PATTERNS))
    return sorted((set(listed(repo, "--cached")) | set(listed(repo, "--others", "--exclude-standard"))) - weights)


def copy_tree(repo: Path, files: list[str], target: Path) -> None:
    for name in files:
        source = repo / name
        if source.is_file() and not source.is_symlink():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


def device_command(call: PlannedCall, root: Path, out: Path, site: Path, work: Path) -> str:
    """The call's command as the CPU runs it: this interpreter for python3, the scratch's site for /tmp/site and
    its work folder for /tmp/gpujob, the scaled returns, and the proof allowed to run without CUDA on a few
    sentences."""
    command = call.command.replace("python3 ", f"{sys.executable} ").replace(str(SITE_DIR), str(site))
    command = command.replace(str(DEFAULT_WORK), str(work))
    command = command.replace("nvidia-smi -L; ", "")
    command = command.replace("gpujob run --out $OUT", f"gpujob run --out $OUT --poll 5 --shard-mib {SHARD_MIB} "
                                                       f"--max-return-mib {RETURN_MIB}")
    command = command.replace("gpujob install-wheels &&", f"gpujob install-wheels --target {site} &&")
    return command.replace("cuda-proof --out $OUT", "cuda-proof --out $OUT --allow-cpu --sentences 6 --repeats 1")


@dataclass
class CallRecord:
    """One rehearsed call."""

    window: str
    name: str
    sent_bytes: int  # tree + carry
    exit_code: int
    seconds: float  # wall-clock here
    returned: list[tuple[str, int]]  # (file, bytes) in $OUT
    problems: list[str] = field(default_factory=list)


def check_return(out: Path) -> list[str]:
    files = [p for p in out.rglob("*") if p.is_file()]
    problems = []
    if len(files) > DEVICE_RETURN.max_files:
        problems.append(f"{len(files)} files back, over {DEVICE_RETURN.max_files}")
    if any(p.stat().st_size > DEVICE_RETURN.max_file_bytes for p in files):
        problems.append("a file back over 16 MiB")
    if sum(p.stat().st_size for p in files) > DEVICE_RETURN.max_total_bytes:
        problems.append("over 64 MiB back")
    return problems


def run_call(window: Window, call: PlannedCall, here: Path, device: Path, outs: Path, site: Path, work: Path,
             log: Callable[[str], None]) -> CallRecord:
    """One call: `device` laid anew (the tree, this call's carry), the command run there, $OUT checked."""
    carry = here / call.carry
    shutil.rmtree(device, ignore_errors=True)
    copy_tree(here, travelling_files(here), device)
    if call.carries and carry.is_dir():
        shutil.copytree(carry, device / call.carry)
    tree = size_of(here, travelling_files(here))
    sent = tree + (folder_size(carry) if call.carries else 0)
    out = outs / call.name
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    env = {**os.environ, "OUT": str(out), "PYTHONUNBUFFERED": "1"}
    env.pop("PYTHONPATH", None)  # the device runs the copy it was sent, never this checkout
    env["GPUJOB_WORK"] = str(work)  # /tmp/gpujob's part for what the command does not name itself
    started = time.monotonic()
    done = subprocess.run(["bash", "-c", device_command(call, device, out, site, work)], cwd=device, env=env,
                          capture_output=True, text=True)
    seconds = time.monotonic() - started
    (outs / f"{call.name}.log").write_text(done.stdout + done.stderr)
    record = CallRecord(window.name, call.name, sent, done.returncode, seconds,
                        sorted((p.name, p.stat().st_size) for p in out.iterdir() if p.is_file()), check_return(out))
    if sent > LIMIT_BYTES:
        record.problems.append(f"sends {sent / MiB:.1f} MiB, over 64")
    log(f"  {window.name}/{call.name}: exit {done.returncode} in {seconds:.0f} s; sent {sent / MiB:.1f} MiB "
        f"(limit 64); back {len(record.returned)} files {sum(b for _, b in record.returned) / MiB:.2f} MiB"
        + (f"; PROBLEMS: {record.problems}" if record.problems else ""))
    return record


def gpujob(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """`python -m gpujob ARGS` in a scratch copy, from that copy's own code."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-m", "gpujob", *args], cwd=root, env=env, capture_output=True, text=True)
    if check and done.returncode != 0:
        raise RuntimeError(f"gpujob {' '.join(args)} exited {done.returncode}:\n{done.stdout[-2000:]}"
                           f"{done.stderr[-2000:]}")
    return done


def prepare_here(repo: Path, here: Path, log: Callable[[str], None]) -> None:
    """`here`: the travelling tree as a git repository, the shipped weights beside it (ignored, as slim leaves
    them), the tiny v2 config over a synthetic corpus, and the pieces cut as before a window."""
    copy_tree(repo, travelling_files(repo), here)
    for weights in listed(repo, "--cached", "--", *PATTERNS):
        (here / weights).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(repo / weights, here / weights)
    git(here.parent, "init", "-q", str(here))
    (here / ".git" / "info").mkdir(parents=True, exist_ok=True)
    (here / ".git" / "info" / "exclude").write_text("/models/*/model.pt\n/.whl/\n/data/\n")
    data = synthetic_corpus(here / "data" / "processed" / "translate")
    config = json.loads((repo / V2_CONFIG).read_text())
    config.update({"data_dir": str(data), "mix": "ding=1,catalogs=0.5", "model": {**TINY_MODEL,
                   "pre_norm": config["model"]["pre_norm"]}, "batch_tokens": 320, "warmup_steps": 4,
                   "eval_every": 4, "eval_docs": 4, "eval_everyday": False, "eval_sentences": 4, "amp": "none",
                   "threads": 1, "log_every": 1, "max_src_len": 24, "max_time": TINY_SECONDS})
    (here / V2_CONFIG).write_text(json.dumps(config, indent=1) + "\n")
    probe_wheel(here / ".whl")
    for step in (("pack",), ("wheels",)):
        log(f"  here: python -m gpujob {' '.join(step)}: "
            + gpujob(here, *step).stdout.strip().splitlines()[-1][:150])


def rehearse(repo: Path, scratch: Path, log: Callable[[str], None] = print) -> dict[str, Any]:
    """Both windows on the CPU; returns the calls' records and the ship decision."""
    shipped = {p: sha256_of(repo / p) for p in listed(repo, "--cached", "--", "models/translate")
               if (repo / p).is_file()}
    here, device, outs, site = scratch / "here", scratch / "device", scratch / "out", scratch / "site"
    work = scratch / "work"  # /tmp/gpujob's part: outside the checkout, kept between the calls of one window
    for folder in (here, device, outs, work):
        shutil.rmtree(folder, ignore_errors=True)
    started = time.monotonic()
    prepare_here(repo, here, log)
    plan = windows(max_time=TINY_SECONDS)
    records: list[CallRecord] = []
    translate = plan["translate"]
    log(f"window {translate.name} ({PLANNED_CONFIGS[0]}, max_time {TINY_SECONDS:.0f} s)")
    for call in translate.calls:
        records.append(run_call(translate, call, here, device, outs, site, work, log))
    folders = [str(outs / c.name) for c in translate.calls]
    decision = gpujob(here, "unpack", *folders, "--candidate", str(scratch / "candidate"), "--ship-to",
                      str(here / "models" / "translate"), "--data-dir", "data/processed/translate", "--method",
                      "greedy", "--limit", "4")
    shipped_now = "shipped into" in decision.stdout
    log("  unpack: " + " | ".join(line for line in decision.stdout.splitlines()
                                   if line.startswith(("shards ok", "not shipped", "shipped into"))))
    # The cuda window comes once v2 has shipped: the candidate takes the shipped translator's seat in `here` (a
    # tiny model exports and runs in seconds here, where the shipped 27M one takes minutes), then the weights' pieces
    cuda = plan["cuda"]
    for name in (CONFIG_FILE, WEIGHTS_FILE, TOKENIZER_FILE):
        shutil.copyfile(scratch / "candidate" / name, here / "models" / "translate" / name)
    log("  here: python -m gpujob weights: " + gpujob(here, "weights").stdout.strip().splitlines()[-1][:150])
    log(f"window {cuda.name} (the candidate as the shipped translator)")
    shutil.rmtree(work)  # a later window: a fresh machine, its /tmp empty
    for call in cuda.calls:
        records.append(run_call(cuda, call, here, device, outs, site, work, log))
    latency = outs / cuda.calls[-1].name / "latency.md"
    readme = here / "README.md"
    if latency.is_file():
        gpujob(here, "record-latency", str(latency.parent), "--into", str(readme))
    unchanged = all(sha256_of(repo / p) == h for p, h in shipped.items())
    result = {"calls": [r.__dict__ for r in records], "shipped": shipped_now, "models_untouched": unchanged,
              "latency_recorded": latency.is_file() and "## Latency on a GPU" in readme.read_text(),
              "seconds": round(time.monotonic() - started, 1)}
    result["ok"] = (all(not r.problems for r in records) and not shipped_now and unchanged
                    and result["latency_recorded"] and [r.exit_code for r in records] == expected_exits(plan))
    return result


def expected_exits(plan: dict[str, Window]) -> list[int]:
    """Every call's exit: 4 (shards left) then 0 for the translate window, 0 for each cuda call."""
    return [4, 0] + [0] * len(plan["cuda"].calls)
