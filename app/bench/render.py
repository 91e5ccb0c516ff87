"""`companion bench render`: how long the synthetic renderer takes to draw a table frame
(the demo's camera and the learning tables are drawn by it)."""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np

from companion.catalogue import default_catalogue
from vision.box.pack import load_pack
from vision.synthetic.artpacks import write_art_pack
from vision.synthetic.render import Effects, random_camera, render_table
from vision.synthetic.scene import random_scene


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--frames", type=int, default=10, help="frames to render (10)")
    parser.add_argument("--seats", type=int, default=5, help="seats on the table (5)")
    parser.add_argument(
        "--difficulty",
        choices=("easy", "hard"),
        default="hard",
        help="the light and the camera's faults (hard)",
    )
    parser.add_argument("--style", default="lagoon", help="the drawn pack's style (lagoon)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the drawn tables (1)")
    parser.add_argument("--out", help="also save one frame here")


def run(args: argparse.Namespace) -> int:

    with tempfile.TemporaryDirectory() as tmp:
        pack = load_pack(
            write_art_pack(Path(tmp) / "pack", args.style, catalogue=default_catalogue())
        )
    rng = np.random.default_rng(args.seed)
    effects = Effects.hard() if args.difficulty == "hard" else Effects.easy()
    times: list[float] = []
    for i in range(args.frames + 1):
        scene = random_scene(pack.catalogue, rng, args.seats, "front", args.difficulty)
        camera = random_camera(rng, scene, pack)
        start = time.perf_counter()
        rendered = render_table(scene, pack, camera, effects, rng)
        elapsed = time.perf_counter() - start
        if i > 0:  # the first frame warms caches up
            times.append(elapsed)
        if args.out and i == 1:
            cv2.imwrite(args.out, rendered.image)
    w, h = rendered.image.shape[1], rendered.image.shape[0]
    print(
        f"render_table: {args.frames} frames of {w}x{h}, {args.seats} seats, {args.difficulty}: "
        f"median {1000 * float(np.median(times)):.0f} ms, worst {1000 * max(times):.0f} ms"
    )
    return 0
