"""Reading a frame: the kit's markers, where each area lies, what each cell holds, the ship,
the storage slots, the motion gate and the lens. `read.TableReader` reads whole tables (and
owns the threads and worker processes its reads share); `incremental.IncrementalReader`
reads only what changed since the last accepted read."""
