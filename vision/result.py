"""Compatibility name for companion.reading (the read result types moved there)."""

from companion.reading import EMPTY, UNKNOWN, CellRead, Grid, SeatRead, TableRead

__all__ = ["EMPTY", "UNKNOWN", "CellRead", "Grid", "SeatRead", "TableRead"]
