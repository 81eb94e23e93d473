"""The translation corpus: every parallel source read, filtered, deduplicated, split and decontaminated.

Outputs (data/processed/translate/, columns de, en, kind, source):
- train.tsv: all sources mixed (the trainer weights them by `source`, see tx.tasks.TranslateConfig.mix);
- valid.tsv / test.tsv: the Ding sentence pairs held out exactly as before this corpus grew (1,000 / 1,500),
  so scores stay comparable across versions;
- docs_valid.tsv / docs_test.tsv: documentation sentence pairs (1,000 / 1,500) from whole documents chosen by
  hash: no page straddles train and test;
- manifest.json: sources with versions, sha256 and licences, and per-source counts after each step.

Order of the steps, per source: read -> pair filters (filters.PAIR_FILTERS) -> exact/near dedup against
everything kept so far (Ding first, then documentation, then catalogs) -> held-out split (Ding, docs) ->
decontamination of train against every valid/test set, the everyday dev set included.
"""
from __future__ import annotations

import dataclasses
import importlib
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from . import filters
from .ding import DING_RULES, parse_ding, read_ding_lines
from .io import EVALSETS, FORMAT, SPLIT_HASH, TRANSLATE_HEADER, DataError, normalize, now, read_tsv, stable_hash
from .records import Pair
from .sources import SOURCES, sources_for
from .splits import split_translation

DOC_CORPORA = ("libreoffice_help", "gimp_help", "debian_docs")  # documentation: source of the docs valid/test
# Train only. GNOME help is documentation too, but it joined after the docs valid/test were drawn: keeping it
# out of the draw keeps those sets (and scores on them) identical across corpus versions.
OTHER_CORPORA = ("gnome_help", "catalogs")
CORPORA = ("ding", *DOC_CORPORA, *OTHER_CORPORA)
EVERYDAY = EVALSETS / "everyday.tsv"
DOCS_MIN_WORDS = 5  # a documentation test sentence has at least this many words a side


def read_corpus(name: str, files: Mapping[str, Path], stats: dict) -> Iterable[Pair]:
    """Pairs of one non-Ding corpus, through its reader module corpus.<name>."""
    module = importlib.import_module(f"{__package__}.{name}")
    return module.read_pairs(files, stats)


def reserved_eval_texts(files: Mapping[str, Path]) -> list[str]:
    """Both sides of every entry of the evaluation-only catalogs (Django's German catalogs): read for
    decontamination only, never for training."""
    # the catalog reader's own parsing
    from .catalog_text import entry_texts
    from .catalogs import package_files
    from .gettext_format import parse_po

    texts: list[str] = []
    for key, src in sources_for("eval_only").items():
        if key in files:
            for name, content in sorted(package_files(src, files[key])):
                for e in parse_po(content, f"{files[key]}:{name}"):
                    texts += [t for pair in entry_texts(e, Counter()) for t in pair]
    return texts


def _eval_worthy_doc(p: Pair) -> bool:
    return (p.kind == "sentence" and min(len(p.de.split()), len(p.en.split())) >= DOCS_MIN_WORDS
            and not any(c in p.de + p.en for c in "/…|"))


def split_documents(pairs: Sequence[Pair], n_test: int, n_valid: int) -> dict[str, list[Pair]]:
    """Whole documents in sha1 order of their id go to test, then valid, until each holds enough eval-worthy
    sentence pairs; the sets are cut to exactly n pairs, and the rest of a held-out document is used nowhere."""
    by_doc: dict[str, list[Pair]] = {}
    for p in pairs:
        by_doc.setdefault(p.doc, []).append(p)
    out: dict[str, list[Pair]] = {"test": [], "valid": [], "train": []}
    held_docs: set[str] = set()
    for doc in sorted(by_doc, key=lambda d: (stable_hash(d), d)):
        worthy = [p for p in by_doc[doc] if _eval_worthy_doc(p)]
        target = "test" if len(out["test"]) < n_test else "valid" if len(out["valid"]) < n_valid else None
        if target is None:
            break
        if worthy:
            held_docs.add(doc)
            out[target] += worthy[:(n_test if target == "test" else n_valid) - len(out[target])]
    out["train"] = [p for p in pairs if p.doc not in held_docs]
    return out


def _count(pairs: Iterable[Pair]) -> dict[str, int]:
    c = Counter(p.kind for p in pairs)
    return {"sentence": c["sentence"], "phrase": c["phrase"], "word": c["word"], "total": sum(c.values())}


def read_everyday(path: Path = EVERYDAY) -> list[dict[str, str]]:
    """The hand-written everyday dev set (tx/evalsets/everyday.tsv): never trained on, used for selection."""
    return read_tsv(path)


def build_translate(files: Mapping[str, Path], corpora: Sequence[str] = CORPORA, n_test: int = 1500,
                    n_valid: int = 1000, docs_test: int = 1500, docs_valid: int = 1000,
                    log: Callable[[str], None] = print) -> tuple[dict[str, list[Pair]], dict]:
    """All splits in memory plus the manifest. `files`: {source key: downloaded package}."""
    unknown = [c for c in corpora if c not in CORPORA]
    if unknown or "ding" not in corpora:
        raise DataError(f"corpora must include ding and be among {', '.join(CORPORA)} (got {', '.join(corpora)})")
    per_source: dict[str, dict] = {}
    seen_exact: set = set()
    seen_near: set = set()

    # Ding: curated, so no pair filters; its valid/test are decided exactly as in every earlier version
    log(f"prepare: ding: parsing {files['ding'].name}")
    ding_pairs, ding_stats = parse_ding(read_ding_lines(files["ding"]), words=True)
    if not ding_pairs:
        raise DataError(f"{files['ding']}: no pairs extracted; is it the Ding dictionary?")
    ding, ding_split_stats = split_translation([p for p in ding_pairs if p.kind != "word"], n_test, n_valid)
    # word pairs sharing a side with a held-out sentence go in decontamination below, like every source's
    train: dict[str, list[Pair]] = {"ding": ding["train"] + [p for p in ding_pairs if p.kind == "word"]}
    for p in train["ding"] + ding["valid"] + ding["test"]:
        seen_exact.add((normalize(p.de), normalize(p.en)))
    per_source["ding"] = {"extraction": dataclasses.asdict(ding_stats), "split": ding_split_stats}

    docs_pool: list[Pair] = []
    for name in corpora[1:]:
        keys = sources_for(name)
        stats: dict = {}
        counts: dict[str, int] = {}
        log(f"prepare: {name}: reading {', '.join(files[k].name for k in keys)}")
        pairs = read_corpus(name, {k: files[k] for k in keys}, stats)
        kept = list(filters.dedup(filters.apply_filters(pairs, counts), seen_exact, seen_near, counts))
        per_source[name] = {"reader": stats, "filters": counts}
        log(f"prepare: {name}: {counts.get('input', 0):,} read -> {len(kept):,} kept")
        if name in DOC_CORPORA:
            docs_pool += kept
        else:
            train[name] = kept

    docs = split_documents(docs_pool, docs_test, docs_valid) if docs_pool else {"test": [], "valid": [], "train": []}
    for name in DOC_CORPORA:
        if name in corpora:
            train[name] = [p for p in docs["train"] if p.source == name]

    held = filters.HeldOut(t for p in ding["valid"] + ding["test"] + docs["valid"] + docs["test"]
                           for t in (p.de, p.en))
    everyday = read_everyday()
    held.add(t for r in everyday for t in (r["de"], r["en"]))
    reserved = reserved_eval_texts(files)
    held.add(reserved)
    all_train: list[Pair] = []
    for name, pairs in train.items():
        counts = per_source[name].setdefault("filters", {})
        kept = list(filters.decontaminate(pairs, held, counts))
        per_source[name]["train"] = _count(kept)
        all_train += kept
    all_train.sort(key=lambda p: (stable_hash(normalize(p.de)), p.de, p.en))
    splits = {"train": all_train, "valid": ding["valid"], "test": ding["test"],
              "docs_valid": docs["valid"], "docs_test": docs["test"]}
    manifest = {
        "task": "translate",
        "created": now(),
        "sources": {k: {**dataclasses.asdict(s), "file": files[k].name} for k, s in SOURCES.items()
                    if s.feeds in corpora and k in files},
        "licences": sorted({s.licence for s in SOURCES.values() if s.feeds in corpora}),
        "columns": list(TRANSLATE_HEADER),
        "format": FORMAT,
        "counts": {name: _count(rows) for name, rows in splits.items()},
        "per_source": per_source,
        "filters": {name: (f.__doc__ or "").strip().split("\n")[0] for name, f in filters.PAIR_FILTERS.items()},
        "rules": DING_RULES + [
            "other sources: pair filters in the order listed, then exact duplicates (normalised de+en) and near "
            "duplicates (digits -> 0, punctuation and spacing dropped) of anything kept before (Ding first)",
            f"docs_valid/docs_test: whole documents in sha1 order of their id; sentence pairs of >= "
            f"{DOCS_MIN_WORDS} words a side without '/', '…' or '|'; the rest of a held-out document is dropped",
            "train: minus any pair sharing a side (exact, or near key of >= 8 characters) with valid, test, "
            "docs_valid, docs_test, the everyday dev set or the catalogs reserved for evaluation (Django)",
        ],
        "split": {"hash": f"{SPLIT_HASH} (German side for Ding; document id for documentation)",
                  "test": n_test, "valid": n_valid, "docs_test": docs_test, "docs_valid": docs_valid},
        "everyday_dev_set": {"path": "tx/evalsets/everyday.tsv", "pairs": len(everyday)},
        "reserved_for_evaluation": {"sources": sorted(k for k in sources_for("eval_only") if k in files),
                                    "texts": len(reserved), "use": "decontamination only, never training"},
    }
    return splits, manifest


def prepare_translate(files: Mapping[str, Path], out_dir: Path, corpora: Sequence[str] = CORPORA,
                      n_test: int = 1500, n_valid: int = 1000, log: Callable[[str], None] = print) -> dict:
    splits, manifest = build_translate(files, corpora, n_test, n_valid, log=log)
    rows = {f"{name}.tsv": (TRANSLATE_HEADER, [(p.de, p.en, p.kind, p.source) for p in pairs])
            for name, pairs in splits.items() if pairs or name in ("train", "valid", "test")}
    return {"out_dir": out_dir, "files": rows, "manifest": manifest}


def corpus_card(manifest: dict) -> str:
    """Markdown tables of a translate manifest: sources (versions, licences) and counts per source and step."""
    filters_seen: list[str] = []
    for info in manifest["per_source"].values():
        for name in info.get("filters", {}):
            if name not in ("input", "kept") and name not in filters_seen:
                filters_seen.append(name)
    lines = ["| corpus | read | " + " | ".join(f.replace("_", " ") for f in filters_seen)
             + " | train pairs | sentences | phrases | words |",
             "|---|" + "--:|" * (len(filters_seen) + 5)]
    for name, info in manifest["per_source"].items():
        f, t = info.get("filters", {}), info.get("train", {})
        read = f.get("input", (info.get("extraction") or {}).get("subentries", ""))
        cells = [f"{f.get(x, 0):,}" for x in filters_seen]
        lines.append(f"| {name} | {read:,} | " + " | ".join(cells) + f" | {t.get('total', 0):,} | "
                     f"{t.get('sentence', 0):,} | {t.get('phrase', 0):,} | {t.get('word', 0):,} |")
    c = manifest["counts"]
    lines += ["", "| split | pairs | sentences |", "|---|--:|--:|"]
    lines += [f"| {name} | {n['total']:,} | {n['sentence']:,} |" for name, n in c.items()]
    by_corpus: dict[str, list[str]] = {}
    for s in manifest["sources"].values():
        by_corpus.setdefault(s["feeds"], []).append(f"`{s['package']}` {s['version']} ({s['licence']})")
    lines += ["", "| corpus | packages (version, licence) |", "|---|---|"]
    lines += [f"| {k} | {', '.join(v)} |" for k, v in by_corpus.items()]
    return "\n".join(lines) + "\n"
