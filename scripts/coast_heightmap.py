#!/usr/bin/env python3
"""Writes worlds/coast.png, the 16-bit heightmap of worlds/coast.toml (issue #19): sea along the west
(-X) edge, land rising to the east, a bay cut into the coast, three islands off it and two lakes in
basins inland. Heights are fractions of the world's floor amplitude; with coast.toml's floor
(height 0.2, amplitude 1.6) and water level 0.7 the sea floor lies at about 0.3 and the land at 0.9
and up. Deterministic (no randomness, no third-party modules): rerun it to get the same bytes.

    python3 scripts/coast_heightmap.py [out.png]
"""

import math
import struct
import sys
import zlib

SIZE = 257  # pixels per side: one per voxel column of a 256-voxel world, corner to corner

# Floor of coast.toml: h = HEIGHT + AMPLITUDE * v, v in [0, 1].
HEIGHT = 0.2
AMPLITUDE = 1.6
LEVEL = 0.7


def smooth(t):
    t = min(1.0, max(0.0, t))
    return t * t * (3.0 - 2.0 * t)


def bump(x, y, cx, cy, r):
    """1 at (cx, cy), falling smoothly to 0 at distance r."""
    d = math.hypot(x - cx, y - cy) / r
    return smooth(1.0 - d)


def ripple(x, y):
    """Gentle rolling ground: a few fixed sines (world units of 16 across)."""
    return 0.03 * math.sin(0.9 * x + 0.3 * y) + 0.025 * math.sin(0.5 * y - 1.3 * x + 1.0) + 0.02 * math.sin(1.7 * y + 0.4)


def height(x, y):
    """World height at world (x, y) in a 16 x 16 world."""
    # The coast line wanders around x = 5.5; land rises over 3 units east of it.
    coast = 5.5 + 0.6 * math.sin(y * 0.55) + 0.3 * math.sin(y * 1.3 + 1.0)
    t = smooth((x - coast + 1.0) / 3.5)
    z = 0.3 + t * (1.05 - 0.3) + (x / 16.0) * 0.3 + ripple(x, y)
    # The bay: a round inlet reaching east into the land at y = 11.
    z -= 0.9 * bump(x, y, 7.5, 11.0, 3.0) * smooth((x - 3.0) / 2.0)
    # Islands in the sea: round hills rising above the level.
    for cx, cy, r, top in ((2.2, 3.0, 1.8, 0.75), (3.0, 13.5, 1.4, 0.6), (1.6, 8.0, 1.0, 0.55)):
        z += top * bump(x, y, cx, cy, r)
    # Two lakes: basins in the land, their floors below the level.
    z -= 0.8 * bump(x, y, 11.5, 4.5, 2.0)
    z -= 0.75 * bump(x, y, 12.5, 12.0, 1.6)
    return max(HEIGHT, min(HEIGHT + AMPLITUDE, z))


def png16(width, height_px, rows):
    """A 16-bit greyscale PNG: rows of big-endian samples, filter 0 per row."""
    raw = b"".join(b"\x00" + struct.pack(">%dH" % width, *row) for row in rows)

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    ihdr = struct.pack(">IIBBBBB", width, height_px, 16, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "worlds/coast.png"
    world = 16.0
    rows = []
    # The top row is the +Y edge (worlds/README.md, "Heightmap floor").
    for row in range(SIZE):
        y = world * (SIZE - 1 - row) / (SIZE - 1)
        values = []
        for col in range(SIZE):
            x = world * col / (SIZE - 1)
            v = (height(x, y) - HEIGHT) / AMPLITUDE
            values.append(int(round(v * 65535)))
        rows.append(values)
    with open(out, "wb") as f:
        f.write(png16(SIZE, SIZE, rows))
    below = sum(1 for r in rows for v in r if HEIGHT + AMPLITUDE * v / 65535 < LEVEL)
    print(f"{out}: {SIZE}x{SIZE}, {100.0 * below / SIZE / SIZE:.1f} % of the ground below the level {LEVEL}")


if __name__ == "__main__":
    main()
