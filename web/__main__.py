"""python -m web [--model-dir DIR] [--out DIR] [--int8-only] [--if-stale]: build the static translator folder
(web/build.py; `make web`). `python -m web serve [FOLDER] [--port N] [--isolated]` serves it (web/serve.py)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .build import FIRST_LOAD_LIMIT, BuildOptions, build, is_fresh, size_table
from .ort_package import PackageError


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["serve"]:
        from . import serve
        return serve.main(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m web", description=__doc__.split(": ", 1)[1].replace("\n", " "))
    defaults = BuildOptions()
    parser.add_argument("--model-dir", type=Path, default=defaults.model_dir, help="an exported translator")
    parser.add_argument("--out", type=Path, default=defaults.out, help="the folder to (re)build")
    parser.add_argument("--int8-only", action="store_true", help="leave the fp32 graphs out (a smaller folder)")
    parser.add_argument("--if-stale", action="store_true", help="do nothing when the folder is newer than its inputs")
    args = parser.parse_args(argv)
    options = BuildOptions(args.model_dir, args.out, ("int8",) if args.int8_only else defaults.precisions)
    if args.if_stale and is_fresh(options):
        print(f"{args.out} is up to date")
        return 0
    try:
        config = build(options)
    except (FileNotFoundError, FileExistsError, PackageError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(size_table(config))
    if config["load_bytes"]["int8"] > FIRST_LOAD_LIMIT:
        print(f"warning: the int8 first load is over {FIRST_LOAD_LIMIT / 1e6:.0f} MB", file=sys.stderr)
    print(f"built {args.out}: serve it with `python -m web serve {args.out} --isolated`")
    return 0


if __name__ == "__main__":
    sys.exit(main())
