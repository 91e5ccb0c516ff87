"""Learning a box: a tile pack's pictures, the templates matched against cells, the judge
learnt from rendered tables of the pack, the lessons a table teaches and `companion teach`'s
pack building."""
