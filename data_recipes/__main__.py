"""Command line: ``python -m data_recipes list | prepare NAME [NAME...] | prepare all``.

Exit codes: 0 success, or the only failures are "not available" (reported with how to get
the data); 1 a checksum or content error (corrupt/malformed source); 2 bad usage.
"""
from __future__ import annotations

import argparse
import logging
import sys

from . import get_recipe, names, prepare
from .framework import DataError, NotAvailableError, data_root, find_in_mirror, mirror_root, read_manifest


def _list() -> int:
    mirror = mirror_root()
    print(f"prepared data: {data_root()}    mirror: {mirror or '(PATE_STUDY_MIRROR not set)'}")
    print(f"{'name':<16} {'prepared':<28} {'mirror':<22} network")
    for name in names():
        recipe = get_recipe(name)
        manifest = read_manifest(name)
        prepared = f"yes ({manifest.get('variant')})" if manifest else "no"
        if mirror is None:
            in_mirror = "-"
        else:
            variant = recipe.mirror_variant()
            if variant is not None:
                in_mirror = f"yes ({variant.name})"
            else:
                some = any(find_in_mirror(recipe.folder, f, mirror) for v in recipe.variants for f in v.files)
                in_mirror = "partial" if some else "no"
        net = "yes" if any(all(f.urls for f in v.files) for v in recipe.variants) else "manual"
        print(f"{name:<16} {prepared:<28} {in_mirror:<22} {net}")
    return 0


def _prepare(targets: list[str], *, force: bool, allow_large: bool, offline: bool) -> int:
    if targets == ["all"]:
        targets = [n for n in names() if get_recipe(n).in_all]
    for t in targets:
        get_recipe(t)  # validate names before doing any work
    missing, broken = [], []
    for name in targets:
        try:
            path = prepare(name, network=not offline, force=force, allow_large=allow_large or None)
        except NotAvailableError as exc:
            missing.append((name, str(exc)))
            print(f"[not available] {name}")
            continue
        except DataError as exc:
            broken.append((name, str(exc)))
            print(f"[ERROR] {name}: {exc}", file=sys.stderr)
            continue
        manifest = read_manifest(name) or {}
        print(f"[ok] {name} -> {path} ({manifest.get('scale', '?')})")
    if missing:
        print("\nCould not get:")
        for name, why in missing:
            how = get_recipe(name).how_to_get
            print(f"  - {name}: {why.splitlines()[0]}\n      how to get it: {how}")
    if broken:
        print(f"\n{len(broken)} dataset(s) failed with corrupt or malformed input; previous prepared data "
              "were left intact.", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m data_recipes", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="datasets, whether prepared, whether in the mirror")
    p = sub.add_parser("prepare", help="prepare datasets (mirror first, then network)")
    p.add_argument("names", nargs="+", help="dataset names, or 'all'")
    p.add_argument("--force", action="store_true", help="prepare again even if already prepared")
    p.add_argument("--allow-large", action="store_true", help="allow multi-GB downloads (Audio Set features)")
    p.add_argument("--offline", action="store_true", help="mirror only, no network")
    p.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if getattr(args, "verbose", False) else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    if args.command == "list":
        return _list()
    try:
        return _prepare(args.names, force=args.force, allow_large=args.allow_large, offline=args.offline)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
