"""Command line: ``python -m data_recipes list | prepare NAME [NAME...] | prepare all``.

Exit codes:

- 0: every dataset asked for was prepared (``all``: every dataset of ``make data``);
- 1: a checksum, content or completeness error (corrupt, malformed or incomplete source; the
  previous prepared data were left as they were), for any dataset, ``all`` included;
- 2: bad usage (unknown name, bad flag) or a bad environment variable;
- 3: a dataset asked for is not available (not in the mirror, no network or no public URL), by name or
  under ``all`` (e.g. the hand-placed Kaggle and ECML files): listed at the end with how to get it.

Every dataset is attempted, ``all`` keeps going past failures, and the failures are listed again at the end,
one line each, so a script running ``make data && ...`` stops when something could not be prepared.
"""

from __future__ import annotations

import argparse
import dataclasses
import enum
import logging
import sys

from data_recipes import get_recipe, names, prepare
from data_recipes.files import EnvPathError, WriteFailedError, one_line
from data_recipes.framework import DataError, NotAvailableError, data_root, find_in_mirror, mirror_root, read_manifest

EXIT_OK, EXIT_DATA, EXIT_USAGE, EXIT_NOT_AVAILABLE = 0, 1, 2, 3


class Sources(enum.StrEnum):
    """Where a dataset's files are fetched from: the mirror, then the network (the default), or the mirror only
    (``--offline``). Two ways of getting the files, so a choice rather than a flag."""

    MIRROR_THEN_NETWORK = "mirror-then-network"
    MIRROR_ONLY = "mirror-only"


@dataclasses.dataclass(frozen=True)
class PrepareOptions:
    """What ``prepare`` may do: ``sources`` (:class:`Sources`), and three permissions, each a yes/no consent that
    relaxes one safeguard of the same algorithm (so they stay booleans): ``force`` (prepare again although already
    prepared), ``allow_large`` (multi-GB downloads), ``allow_small`` (install a result smaller than the data card
    declares, recorded in the manifest)."""

    sources: Sources = Sources.MIRROR_THEN_NETWORK
    force: bool = False
    allow_large: bool = False
    allow_small: bool = False

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> PrepareOptions:
        """The options of a parsed ``prepare`` command line."""
        return cls(
            sources=Sources.MIRROR_ONLY if args.offline else Sources.MIRROR_THEN_NETWORK,
            force=args.force,
            allow_large=args.allow_large,
            allow_small=args.allow_small,
        )

    def prepare_kwargs(self) -> dict:
        """The keywords of :func:`data_recipes.prepare` (``allow_large=None``: the environment decides)."""
        return {
            "network": self.sources is Sources.MIRROR_THEN_NETWORK,
            "force": self.force,
            "allow_large": self.allow_large or None,
            "allow_small": self.allow_small,
        }


def _list() -> int:
    mirror = mirror_root()
    print(f"prepared data: {data_root()}    mirror: {mirror or '(PATE_STUDY_MIRROR not set)'}")
    print(f"{'name':<16} {'prepared':<28} {'mirror':<22} network")
    for name in names():
        recipe = get_recipe(name)
        manifest = read_manifest(name)
        problem = recipe.problem()
        prepared = (
            "no"
            if manifest is None
            else (f"yes ({manifest.get('variant')})" if problem is None else "incomplete: prepare again")
        )
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
    return EXIT_OK


def _prepare(targets: list[str], options: PrepareOptions) -> int:
    by_name = targets != ["all"]
    if not by_name:
        targets = [n for n in names() if get_recipe(n).in_all]
    for t in targets:
        get_recipe(t)  # validate names before doing any work
    missing, broken = [], []
    for name in targets:
        try:
            path = prepare(name, **options.prepare_kwargs())
        except NotAvailableError as exc:
            missing.append((name, one_line(exc)))
            print(f"[not available] {name}", file=sys.stderr)
            continue
        except DataError as exc:
            broken.append((name, one_line(exc)))
            print(f"[ERROR] {name}: {one_line(exc)}", file=sys.stderr)
            continue
        manifest = read_manifest(name) or {}
        print(f"[ok] {name} -> {path} ({manifest.get('scale', '?')})")
    if missing:
        print("\nCould not get:", file=sys.stderr)
        for name, why in missing:
            print(f"  - {name}: {why}", file=sys.stderr)
    if broken:
        print(
            f"\n{len(broken)} dataset(s) failed with corrupt, malformed or incomplete input; previous prepared "
            "data were left intact:",
            file=sys.stderr,
        )
        for name, why in broken:
            print(f"  - {name}: {why}", file=sys.stderr)
        return EXIT_DATA
    if missing:
        return EXIT_NOT_AVAILABLE
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m data_recipes", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="datasets, whether prepared, whether in the mirror")
    p = sub.add_parser("prepare", help="prepare datasets (mirror first, then network)")
    p.add_argument("names", nargs="+", help="dataset names, or 'all'")
    p.add_argument("--force", action="store_true", help="prepare again even if already prepared")
    p.add_argument("--allow-large", action="store_true", help="allow multi-GB downloads (Audio Set features)")
    p.add_argument(
        "--allow-small",
        action="store_true",
        help="install a non-empty result smaller than the data card declares (recorded in the manifest)",
    )
    p.add_argument("--offline", action="store_true", help="mirror only, no network")
    p.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if getattr(args, "verbose", False) else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    try:
        if args.command == "list":
            return _list()
        return _prepare(args.names, PrepareOptions.from_args(args))
    except (ValueError, EnvPathError) as exc:  # unknown name, bad environment variable, folder not writable
        print(f"error: {one_line(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except WriteFailedError as exc:  # disk full or read-only while preparing: nothing installed, old data kept
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
