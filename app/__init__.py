"""The composition root: the `companion` command wires the game (companion/), the reader
(vision/), the table's hardware (hardware/) and the phone pages (web/) for `run`, `demo`,
`teach`, `read` and the benchmarks. Nothing below app/ imports it (tests/test_layers.py)."""
