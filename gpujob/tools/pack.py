"""python -m gpujob pack [--config FILE ...] [--data-dir DIR]

Packs the prepared corpus (`make data`) for the planned runs: their shared data settings (vocabulary size, mix,
seed, phrases) are read from their configs and must agree; the archive is cut into pieces assigned to the window's
commands (runs/gpujob/send/<command>/) and recorded, with sizes and sha256, in configs/gpujob/pieces.json (commit it).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from runtime.tsv import DataError
from tx.run_setup import make_config

from ..carried import store
from ..corpus import PackSettings, pack_corpus
from ..layout import BUILD_DIR, CORPUS_ARCHIVE
from ..plan import MAX_EPOCHS, PIECE_BYTES, epochs_in
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
        slimmed = slim_paths(root) + [e["path"] for e in removed(root)]
        manifest = store(root, "corpus", [archive], info, slimmed, int(args.piece_mib * 2**20))
    except (ValueError, FileNotFoundError, DataError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    [whole] = manifest.wholes["corpus"]
    print(f"corpus: {whole.bytes / 2**20:.1f} MiB in {len(whole.pieces)} pieces; "
          f"carried by {sorted({manifest.carried_by[p.name] for p in whole.pieces})}; "
          "`python -m gpujob check` for every command's size")
    seconds = json.loads(configs[0].read_text()).get("max_time") or 0
    if seconds > 0:  # a run bounded by steps alone has no planned epochs
        print(f"{info['mixed_rows']:,} pairs after the mix, {sum(info['tokens'].values()):,} tokens: a run of "
              f"{seconds:.0f} s sees each pair about {epochs_in(seconds, info['tokens']):.1f} times (planned at most "
              f"{MAX_EPOCHS:.0f})")
    return 0
