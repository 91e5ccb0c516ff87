"""Reading the table from an overhead camera: markers, homographies, cells, tiles and the ship.

Every stage is a pure function of its inputs and the thresholds in vision.config; the
table's layout comes from vision.kit, the single source of the kit geometry.
"""
