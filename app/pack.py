"""`companion pack synth|check`: draw a synthetic tile pack, or check a pack directory.

- `companion pack synth --style S --out DIR [--seed N] [--px N]` draws a complete pack in one
  of the procedural styles (vision.synthetic.artpacks.STYLES) for every tile type of the bundled
  catalogue (or of `--catalogue FILE`).
- `companion pack check DIR` loads a pack as the recogniser would and prints what it holds.
"""

from __future__ import annotations

import argparse

from companion.catalogue import load_catalogue


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the `synth` and `check` subcommands of `companion pack`."""
    from vision.synthetic.artpacks import STYLES

    actions = parser.add_subparsers(dest="pack_action", metavar="ACTION", required=True)
    synth = actions.add_parser(
        "synth", help="draw a synthetic tile pack", description="Draw a synthetic tile pack."
    )
    synth.add_argument("--style", required=True, choices=STYLES, help="art style")
    synth.add_argument("--out", required=True, metavar="DIR", help="new pack directory")
    synth.add_argument("--seed", type=int, default=0, help="seed (shapes, the random style)")
    synth.add_argument("--px", type=int, default=256, help="tile picture side in pixels")
    synth.add_argument(
        "--catalogue", metavar="FILE", help="tiles.toml or pack.toml to draw (default: bundled)"
    )
    check = actions.add_parser(
        "check", help="check a tile pack directory", description="Check a tile pack directory."
    )
    check.add_argument("pack", metavar="DIR", help="the pack directory (holding pack.toml)")


def run(args: argparse.Namespace) -> int:
    """Do the chosen action; print one summary line when it succeeded."""
    if args.pack_action == "synth":
        from vision.synthetic.artpacks import write_art_pack

        catalogue = load_catalogue(args.catalogue) if args.catalogue else None
        path = write_art_pack(args.out, args.style, catalogue=catalogue, px=args.px, seed=args.seed)
        count = len(catalogue.types) if catalogue else None
        what = f"{count} tile types" if count is not None else "every tile type"
        print(f"wrote a tile pack in the {args.style} style with {what} to {path}")
        return 0
    from vision.box.pack import load_pack

    pack = load_pack(args.pack)
    sides = ", ".join(sorted(pack.boards))
    print(
        f"{pack.root}: {pack.name!r}, {len(pack.tiles)} tile types "
        f"({pack.catalogue.total} tiles), tile {pack.tile_mm:g} mm, ship, boards: {sides}"
    )
    return 0
