"""`companion bench poses`: how close the fitted poses put the cells, and what a read costs.

On rendered 5-seat tables (easy and hard light, a lagoon and a random pack): the error of the
cell centres in mm under three pose fits (each area alone, one table plane, plus the display
lane's outline), and the whole read's time stage by stage in JPEG decodes of the same frame.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np

from vision.box.pack import load_pack
from vision.config import AreaConfig
from vision.reader.areas import DISPLAY, locate_all
from vision.reader.read import Image, TableReader
from vision.synthetic.artpacks import write_art_pack
from vision.synthetic.render import Effects, random_camera, render_table
from vision.synthetic.scene import random_scene


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--scenes", type=int, default=6, help="tables per pack and light")
    parser.add_argument("--styles", default="lagoon,random", help="art packs, comma-separated")
    parser.add_argument("--effects", default="easy,hard", help="lights, comma-separated")
    parser.add_argument("--seed", type=int, default=11, help="seed of the drawn tables (11)")


def run(args: argparse.Namespace) -> int:
    return measure(args.scenes, args.styles.split(","), args.effects.split(","), args.seed)


def measure(scenes: int, styles: list[str], effects_names: list[str], seed: int) -> int:
    """Pose accuracy (cell centres, mm) of the three fits and the read's cost against the
    frame's JPEG decode, on rendered tables."""

    fits = {
        "markers, each area alone": AreaConfig(joint_plane_fit=False, lane_refine=False),
        "markers, one table plane": AreaConfig(lane_refine=False),
        "+ display lane outline": AreaConfig(),
    }
    errors: dict[tuple[str, str, str], list[float]] = {}
    ratios: list[float] = []
    decodes: list[float] = []
    stages: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as readers:
        for style in styles:
            pack = load_pack(write_art_pack(Path(tmp) / style, style, seed=seed))
            reader = readers.enter_context(TableReader(pack))
            layout = pack.catalogue.board("front")
            for effects_name in effects_names:
                effects = Effects.hard() if effects_name == "hard" else Effects.easy()
                for k in range(scenes):
                    rng = np.random.default_rng(seed * 1000 + k)
                    scene = random_scene(
                        pack.catalogue,
                        rng,
                        n_seats=5,
                        difficulty="hard" if effects_name == "hard" else "easy",
                    )
                    rendered = render_table(
                        scene, pack, random_camera(rng, scene, pack), effects, rng
                    )
                    _, jpeg = cv2.imencode(".jpg", rendered.image, [cv2.IMWRITE_JPEG_QUALITY, 92])
                    decode = []
                    for _ in range(3):
                        t = time.perf_counter()
                        image: Image = np.asarray(cv2.imdecode(jpeg, cv2.IMREAD_COLOR), np.uint8)
                        decode.append(time.perf_counter() - t)
                    reader.read(image)  # the same frame read once untimed
                    t = time.perf_counter()
                    _, view = reader.read_view(image)
                    ratios.append((time.perf_counter() - t) / min(decode))
                    decodes.append(min(decode))
                    for stage, seconds in view.timings.items():
                        stages.setdefault(stage, []).append(seconds / min(decode))
                    gray = np.asarray(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY), np.uint8)
                    for name, area_config in fits.items():
                        display, seats, _ = locate_all(
                            view.markers, pack.tile_mm, layout, area_config, gray=gray
                        )
                        for pose in [p for p in (display, *seats.values()) if p is not None]:
                            geo = pose.geometry
                            rows = 4 if pose.area == DISPLAY else layout.rows
                            cols = 4 if pose.area == DISPLAY else layout.cols
                            cells = np.array(
                                [geo.cell_centre(r, c) for r in range(rows) for c in range(cols)]
                            )
                            truth = rendered.homographies[pose.area]
                            pts = np.column_stack([cells, np.ones(len(cells))]) @ truth.T
                            true_px = pts[:, :2] / pts[:, 2:]
                            gap = np.linalg.norm(pose.project(cells) - true_px, axis=1)
                            kind = "display" if pose.area == DISPLAY else "seats"
                            key = (effects_name, kind, name)
                            errors.setdefault(key, []).extend(gap / pose.px_per_mm())
    print(f"{scenes} scenes x {len(styles)} packs per light; 5 seats; 2880 x 1620")
    print("cell-centre error (mm): mean / 95th percentile / max")
    for (effects_name, kind, name), values in sorted(errors.items()):
        arr = np.asarray(values)
        print(
            f"  {effects_name:5} {kind:8} {name:26} {arr.mean():5.2f} / "
            f"{np.percentile(arr, 95):5.2f} / {arr.max():5.2f}"
        )
    decode_ms = 1000 * statistics.median(decodes)
    print(f"read time in JPEG decodes of the same frame (median; one decode {decode_ms:.0f} ms):")
    for stage, values in stages.items():
        median = statistics.median(values)
        beside = {"ship": "  beside the cells", "waiting": "  of cells: for the cell workers"}.get(
            stage, ""
        )
        print(f"  {stage:8} {median:6.2f}  ({median * decode_ms:5.0f} ms){beside}")
    total = statistics.median(ratios)
    print(f"  {'total':8} {total:6.2f}  ({total * decode_ms:5.0f} ms)")
    return 0
