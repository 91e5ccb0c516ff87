"""Reading the table from an overhead camera, in four parts:

- `vision.reader`: reading a frame (markers, areas, cells, ship, storage, motion, lens);
  `vision.reader.read.TableReader` owns a box's models, threads and worker processes;
- `vision.box`: learning a box (tile packs, templates, the judge, a table's lessons, teaching);
- `vision.synthetic`: tables drawn with exact truth (scenes, the renderer, art packs);
- `vision.kit`: the printed kit's geometry (the one source of the layout) and its printer.

Every threshold is in `vision.config`. Nothing here imports hardware/, web/ or app/.
"""
