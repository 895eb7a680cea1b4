#!/usr/bin/env python3
"""Embree's single-thread ray rate on the meshes and rays that `ray_speed --dump DIR` wrote.

    cargo run --release -p kiln-bake --example ray_speed -- --bake out/ice_caves --dump target/rays
    python3 scripts/embree_speed.py target/rays        # needs `pip install embreex numpy`

Prints closest-hit and any-hit Mrays/s per mesh (one thread: embreex traces ray by ray), and how many
rays hit, to compare with Kiln's figures for the same rays.
"""
import pathlib
import sys
import time

try:
    import numpy as np
    from embreex import rtcore_scene as rtcs
    from embreex.mesh_construction import TriangleMesh
except ImportError as e:
    sys.exit(f"embree_speed: {e} (pip install embreex numpy)")


def main(directory):
    root = pathlib.Path(directory)
    names = sorted(p.name[: -len(".rays.f32")] for p in root.glob("*.rays.f32"))
    if not names:
        sys.exit(f"embree_speed: no *.rays.f32 in {root}")
    for name in names:
        pos = np.fromfile(root / f"{name}.positions.f32", dtype="<f4").reshape(-1, 3)
        idx = np.fromfile(root / f"{name}.indices.u32", dtype="<u4").reshape(-1, 3).astype(np.int32)
        rays = np.fromfile(root / f"{name}.rays.f32", dtype="<f4").reshape(-1, 6)
        origins, dirs = np.ascontiguousarray(rays[:, :3]), np.ascontiguousarray(rays[:, 3:])
        t = time.perf_counter()
        scene = rtcs.EmbreeScene()
        TriangleMesh(scene, pos, idx)
        # The first query commits the scene (builds the BVH): time it apart from the rays.
        scene.run(origins[:1], dirs[:1])
        build = time.perf_counter() - t
        t = time.perf_counter()
        hits = scene.run(origins, dirs, query="INTERSECT")
        closest = len(rays) / (time.perf_counter() - t) / 1e6
        t = time.perf_counter()
        occluded = scene.run(origins, dirs, query="OCCLUDED")
        anyhit = len(rays) / (time.perf_counter() - t) / 1e6
        # Both queries answer a geometry id per ray, -1 for a miss.
        hit_count = int((hits >= 0).sum())
        occ_count = int((occluded >= 0).sum())
        print(f"embree {name}: {len(idx)} triangles, build {build:.3f} s; 1 thread: closest-hit {closest:.3f} Mrays/s, "
              f"any-hit {anyhit:.3f} Mrays/s ({hit_count} hits, {occ_count} occluded of {len(rays)})")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "target/rays")
