"""python -m gpujob pack [--config FILE ...] [--data-dir DIR]

Packs the prepared corpus (`make data`) for the planned runs: their shared data settings (vocabulary size, mix,
seed, phrases) are read from their configs and must agree; the archive is cut into pieces assigned to the window's
commands (runs/gpujob/send/<command>/) and recorded, with sizes and sha256, in configs/gpujob/pieces.json (commit it).
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from runtime.tsv import DataError
from tx.run_setup import make_config

from ..carried import store
from ..corpus import PackedCorpus, PackSettings, pack_corpus, unpack_corpus
from ..layout import BUILD_DIR, CORPUS_ARCHIVE
from ..packed_task import epochs_line, example_cost_counts
from ..plan import PIECE_BYTES
from ..runs import PLANNED_CONFIGS
from ..slim import removed, slim_paths
from . import command_parser


def shared_settings(config_files: list[Path], data_dir: str | None) -> PackSettings:
    """The one PackSettings every planned config gives (data_dir from the first config, or given)."""
    settings = [PackSettings.of(make_config("translate", path, [])[0]) for path in config_files]
    for path, other in zip(config_files[1:], settings[1:], strict=True):
        wrong = settings[0].differences(other)
        if wrong:
            raise ValueError(f"{path} and {config_files[0]} differ in data settings ({'; '.join(wrong)}): "
                             "one pack serves every planned run")
    first = settings[0]
    return PackSettings(data_dir or first.data_dir, first.vocab_size, first.mix, first.seed, first.use_phrases)


def recorded_costs(archive: Path, config_file: Path) -> dict[str, int]:
    """The packed examples by cost (`example_cost_counts`) for the first config's lengths and directions: what
    `gpujob plan` turns into batches, and epochs, for any batch_tokens and batch_rows."""
    config = make_config("translate", config_file, [])[0]
    with tempfile.TemporaryDirectory() as folder:
        corpus = PackedCorpus.read(unpack_corpus(archive, Path(folder)))
        return {str(k): v for k, v in example_cost_counts(corpus.train, config).items()}


def main(argv: list[str] | None = None) -> int:
    parser = command_parser("pack", __doc__)
    parser.add_argument("--config", type=Path, action="append", help="planned run config (repeatable; default: "
                        + ", ".join(PLANNED_CONFIGS) + ")")
    parser.add_argument("--data-dir", help="prepared corpus (default: the configs' data_dir)")
    parser.add_argument("--piece-mib", type=float, default=PIECE_BYTES / 2**20, help="piece size in MiB")
    args = parser.parse_args(argv)
    root = Path.cwd()
    configs = args.config or [Path(p) for p in PLANNED_CONFIGS]
    try:
        settings = shared_settings(configs, args.data_dir)
        archive = root / BUILD_DIR / CORPUS_ARCHIVE
        info = pack_corpus(settings, archive)
        info["example_costs"] = recorded_costs(archive, configs[0])
        slimmed = slim_paths(root) + [e["path"] for e in removed(root)]
        manifest = store(root, "corpus", [archive], info, slimmed, int(args.piece_mib * 2**20))
    except (ValueError, FileNotFoundError, DataError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    [whole] = manifest.wholes["corpus"]
    print(f"corpus: {whole.bytes / 2**20:.1f} MiB in {len(whole.pieces)} pieces; "
          f"carried by {sorted({manifest.carried_by[p.name] for p in whole.pieces})}; "
          "`python -m gpujob check` for every command's size")
    print(epochs_line(manifest.info["corpus"], configs[0]))
    return 0
