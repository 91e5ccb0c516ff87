"""The printable kit: markers where vision.kit says, a true scale bar, a clean active area."""

from __future__ import annotations

import re
from pathlib import Path

import cv2
import numpy as np
import pytest
from fpdf import FPDF

from vision import kit
from vision.kit.printer import (
    PRINT_DPI,
    Page,
    Text,
    kit_files,
    mat_layout,
    mat_page,
    pdf_bytes,
    render_png,
    text_width,
    write_kit,
)

PX_PER_MM = PRINT_DPI / 25.4
A3_PT = (841.89, 1190.55)
A4_PT = (595.28, 841.89)


@pytest.fixture(scope="module")
def kit_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("kit") / "kit"
    write_kit(out)
    return out


@pytest.fixture(scope="module")
def mat_png(kit_dir: Path) -> np.ndarray:
    image = cv2.imread(str(kit_dir / f"display-mat-{PRINT_DPI}dpi.png"), cv2.IMREAD_GRAYSCALE)
    assert image is not None
    return np.asarray(image)


def _detect(image: np.ndarray) -> dict[int, np.ndarray]:
    dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, kit.MARKER_DICT))
    detector = cv2.aruco.ArucoDetector(dictionary, cv2.aruco.DetectorParameters())
    corners, ids, _ = detector.detectMarkers(image)
    assert ids is not None, "no marker found"
    return {int(i): c.reshape(4, 2) for i, c in zip(ids.ravel(), corners, strict=True)}


def _to_mm(px: np.ndarray) -> np.ndarray:
    # OpenCV puts pixel centres on whole numbers; the page's edge is at -0.5 px.
    return (px + 0.5) / PX_PER_MM


def _check_mat_markers(image: np.ndarray, tile_mm: float) -> None:
    found = _detect(image)
    geo = kit.DisplayGeometry(tile_mm)
    layout = mat_layout(tile_mm)
    assert set(found) == {0, 1, 2, 3}
    for marker_id, centre in geo.marker_centres().items():
        expected = np.array([layout.to_page(p) for p in kit.marker_corners(centre)])
        error = np.hypot(*(_to_mm(found[marker_id]) - expected).T)
        assert error.max() < 0.5, f"marker {marker_id} is {error.max():.2f} mm off"


@pytest.mark.slow
def test_mat_markers_sit_where_the_kit_says(mat_png: np.ndarray) -> None:
    _check_mat_markers(mat_png, 45.0)
    # The four markers span the mat's true size, whatever the page layout says.
    found = _detect(mat_png)
    span = _to_mm(found[1][1])[0] - _to_mm(found[0][0])[0]
    assert span == pytest.approx(2 * kit.DisplayGeometry(45.0).half_extent - 2 * 2.5, abs=0.5)


def test_mat_for_smaller_tiles_keeps_markers_right() -> None:
    _check_mat_markers(render_png(mat_page(38.0)), 38.0)


def test_scale_bar_measures_100_mm(mat_png: np.ndarray) -> None:
    layout = mat_layout(45.0)
    below = round((layout.origin[1] + kit.DisplayGeometry(45.0).half_extent + 3) * PX_PER_MM)
    runs = []
    for row in mat_png[below:] < 100:
        padded = np.concatenate([[0], row.astype(np.int8), [0]])
        edges = np.flatnonzero(np.diff(padded))
        if len(edges):
            runs.append(int((edges[1::2] - edges[::2]).max()))
    bar = [r for r in runs if r > 50 * PX_PER_MM]  # the rows across the bar
    assert len(bar) >= 2 * PX_PER_MM, "no scale bar below the mat"
    assert max(bar) / PX_PER_MM == pytest.approx(100.0, abs=0.2)
    assert min(bar) / PX_PER_MM == pytest.approx(100.0, abs=0.2)


@pytest.mark.slow
def test_active_area_holds_only_thin_light_outlines_and_markers(mat_png: np.ndarray) -> None:
    geo = kit.DisplayGeometry(45.0)
    layout = mat_layout(45.0)
    ox, oy = layout.origin
    h = geo.half_extent
    x0, y0 = round((ox - h) * PX_PER_MM), round((oy - h) * PX_PER_MM)
    x1, y1 = round((ox + h) * PX_PER_MM), round((oy + h) * PX_PER_MM)
    area = mat_png[y0:y1, x0:x1].astype(int)
    ys, xs = np.mgrid[y0:y1, x0:x1]
    mm_x, mm_y = (xs + 0.5) / PX_PER_MM - ox, (ys + 0.5) / PX_PER_MM - oy
    on_marker = np.zeros(area.shape, bool)
    quiet = np.zeros(area.shape, bool)
    for cx, cy in geo.marker_centres().values():
        dx = np.maximum(np.abs(mm_x - cx) - kit.MARKER_MM / 2, 0)
        dy = np.maximum(np.abs(mm_y - cy) - kit.MARKER_MM / 2, 0)
        on_marker |= (dx < 0.2) & (dy < 0.2)
        quiet |= (np.hypot(dx, dy) < kit.MARKER_MARGIN_MM) & ~((dx < 0.2) & (dy < 0.2))
    rest = area[~on_marker]
    assert rest.min() >= 150, "something dark is printed inside the active area"
    assert area[quiet].min() == 255, "a marker has less than 5 mm of white around it"
    # Outlines are at most 0.5 mm thick: nothing survives an erosion 0.6 mm wide.
    ink = ((area < 250) & ~on_marker).astype(np.uint8)
    k = round(0.6 * PX_PER_MM)
    assert cv2.erode(ink, np.ones((k, k), np.uint8)).sum() == 0
    # ... and they are there: every cell's north edge and the lane's inner edge.
    for r in range(4):
        for c in range(4):
            cx, cy = geo.cell_centre(r, c)
            px = round((ox + cx) * PX_PER_MM)
            py = round((oy + cy - 45.0 / 2) * PX_PER_MM)
            assert mat_png[py - 3 : py + 4, px].min() < 220, f"cell ({r}, {c}) has no outline"
    py = round((oy - geo.lane_inner) * PX_PER_MM)
    assert mat_png[py - 3 : py + 4, round(ox * PX_PER_MM)].min() < 220


def _media_boxes(path: Path) -> list[tuple[float, float]]:
    data = path.read_bytes()
    assert data.startswith(b"%PDF-")
    boxes = re.findall(rb"/MediaBox\s*\[\s*0\s+0\s+([\d.]+)\s+([\d.]+)\s*\]", data)
    return [(float(w), float(h)) for w, h in boxes]


def test_pdfs_are_one_page_on_the_right_paper(kit_dir: Path) -> None:
    expected = {"display-mat-A3.pdf": A3_PT, "setup-guide-A4.pdf": A4_PT}
    expected |= {f"seat-{s}-markers-A4.pdf": A4_PT for s in kit.SEATS}
    expected["storage-cards-A4.pdf"] = A4_PT
    for name, size in expected.items():
        boxes = _media_boxes(kit_dir / name)
        assert len(boxes) == 1, name
        assert boxes[0] == pytest.approx(size, abs=0.1), name


@pytest.mark.slow
def test_seat_sheets_carry_their_four_upright_markers(kit_dir: Path) -> None:
    for seat in kit.SEATS:
        image = cv2.imread(str(kit_dir / f"seat-{seat}-markers-{PRINT_DPI}dpi.png"), 0)
        assert image is not None
        found = _detect(image)
        geo = kit.SeatGeometry(seat)
        assert set(found) == set(geo.marker_ids), f"seat {seat}"
        for marker_id, corners in found.items():
            side = np.hypot(*(corners[1] - corners[0])) / PX_PER_MM
            assert side == pytest.approx(kit.MARKER_MM, abs=0.3)
            # Upright: the first corner is the top-left one on the sheet.
            assert np.argmin(corners.sum(axis=1)) == 0, f"marker {marker_id} is turned"
            x0, y0 = corners.min(axis=0).round().astype(int)
            x1, y1 = corners.max(axis=0).round().astype(int)
            m = round(kit.MARKER_MARGIN_MM * PX_PER_MM)
            ring = image[y0 - m : y1 + m, x0 - m : x1 + m].copy()
            ring[m - 2 : -m + 2, m - 2 : -m + 2] = 255
            assert ring.min() == 255, f"marker {marker_id} lacks its white surround"


def test_storage_cards_outline_the_slot_with_white_round_it(kit_dir: Path) -> None:
    # One card per seat: the storage slot's square (board pitch) outlined, then white
    # paper for kit.STORAGE_CARD_MARGIN_MM before the cut line.
    image = cv2.imread(str(kit_dir / f"storage-cards-{PRINT_DPI}dpi.png"), 0)
    assert image is not None
    contours, _ = cv2.findContours(
        (image < 200).astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE
    )
    pitch = kit.SeatGeometry(1).pitch
    boxes = [cv2.boundingRect(c) for c in contours]
    squares = [b for b in boxes if min(b[2], b[3]) > 30 * PX_PER_MM]
    assert len(squares) == len(kit.SEATS)
    margin = round((kit.STORAGE_CARD_MARGIN_MM - 1.0) * PX_PER_MM)
    for x, y, w, h in squares:
        assert w / PX_PER_MM == pytest.approx(pitch + kit.STORAGE_OUTLINE_MM, abs=0.3)
        assert h / PX_PER_MM == pytest.approx(pitch + kit.STORAGE_OUTLINE_MM, abs=0.3)
        ring = image[y - margin : y + h + margin, x - margin : x + w + margin].copy()
        ring[margin:-margin, margin:-margin] = 255
        assert ring.min() == 255, "the card's margin is not blank"


def test_readme_lists_every_file(kit_dir: Path) -> None:
    names = sorted(p.name for p in kit_dir.iterdir())
    assert names == sorted(f.name for f in kit_files())
    readme = (kit_dir / "README.txt").read_text()
    for name in names:
        assert name in readme


def _one_word(word: str) -> Page:
    page = Page("word", (60.0, 30.0))
    page.text((10.0, 20.0), word, 6.0, bold=True)
    return page


def test_maori_is_printed_with_its_macron(monkeypatch: pytest.MonkeyPatch) -> None:
    # The PDF: the core font has no "ā", so a bar is drawn over the "a" of "Maori".
    bars: list[tuple[float, float, float, float]] = []
    line = FPDF.line

    def spy(pdf: FPDF, x1: float, y1: float, x2: float, y2: float) -> None:
        bars.append((x1, y1, x2, y2))
        line(pdf, x1, y1, x2, y2)

    monkeypatch.setattr(FPDF, "line", spy)
    pdf_bytes([_one_word("Maori")])
    assert bars == []
    pdf_bytes([_one_word("Māori")])
    assert len(bars) == 1
    x1, y1, x2, y2 = bars[0]
    a_from = 10.0 + text_width("M", 6.0, bold=True)
    a_to = 10.0 + text_width("Ma", 6.0, bold=True)
    assert a_from < x1 < x2 < a_to and y1 == y2 and 20.0 - 6.0 < y1 < 20.0 - 6.0 * 0.73

    # The picture: the only ink "ā" adds is a bar above the "a".
    def ink(word: str) -> np.ndarray:
        return np.asarray(render_png(_one_word(word), 300) < 128)

    ys, xs = np.nonzero(ink("Māori") & ~ink("Maori"))
    a_columns = np.nonzero((ink("Ma") & ~ink("M")).any(axis=0))[0]
    assert len(ys) > 20 and ys.max() < (20.0 - 6.0 * 0.73) * 300 / 25.4
    assert a_columns.min() - 2 <= xs.min() and xs.max() <= a_columns.max() + 2
    # Every sheet of the kit says so.
    titles = [item.text for item in mat_page().items if isinstance(item, Text)]
    assert "Māori table companion: display mat" in titles
