"""Reading a frame: the kit's markers, where each area lies, what each cell holds, the ship,
the storage slots, the motion gate and the lens; `read.read_table` reads a whole table and
`incremental.IncrementalReader` only what changed."""
