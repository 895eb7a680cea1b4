//! A blade as a curved, tapered triangle strip (export and tests; the viewer builds the same
//! shape in its shader).

use super::Blade;

fn unit(v: [f64; 3]) -> Option<[f64; 3]> {
    let n = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    (n > 1e-9).then(|| v.map(|x| x / n))
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

/// The horizontal way the tip droops: `direction`'s horizontal part, or the face normal's for a
/// blade standing straight up.
fn droop_axis(d: [f64; 3], n: [f64; 3]) -> [f64; 3] {
    unit([d[0], d[1], 0.0]).or_else(|| unit([n[0], n[1], 0.0])).unwrap_or([0.0, 0.0, 0.0])
}

/// The spine of blade `b` drawn with `segments` segments, as offsets from its base:
/// `segments + 1` points, the first at the origin.
///
/// The contract's centre line is `L · (t·d + bend · t² · h)` (L = length × height_scale, h the unit
/// horizontal part of d). Taken as is, bending would lengthen the blade and its area would no
/// longer be `w·l/2`; so each segment keeps the direction of that curve's chord but the length
/// `L / segments`. The arc length stays L, and the tip comes down as it moves out: a droop. With
/// `bend = 0` the spine is the straight segment to `L · d`.
pub fn blade_spine(b: &Blade, segments: u32, height_scale: f32) -> Vec<[f64; 3]> {
    let s = segments.max(1);
    let len = f64::from(b.length) * f64::from(height_scale);
    let d = b.direction.map(f64::from);
    let h = droop_axis(d, b.normal.map(f64::from));
    let bend = f64::from(b.bend);
    let raw = |t: f64| [0, 1, 2].map(|c| len * (t * d[c] + bend * t * t * h[c]));
    let step = len / f64::from(s);
    let mut spine = vec![[0.0; 3]];
    for i in 0..s {
        let (t0, t1) = (f64::from(i) / f64::from(s), f64::from(i + 1) / f64::from(s));
        let (a, c) = (raw(t0), raw(t1));
        let chord = unit([c[0] - a[0], c[1] - a[1], c[2] - a[2]]).unwrap_or(d);
        let last = spine[i as usize];
        spine.push([0, 1, 2].map(|k| last[k] + step * chord[k]));
    }
    spine
}

/// Blade `b` as a triangle strip in patch-local coordinates (base at `(x, y, 0)`), its length
/// multiplied by `height_scale`: `segments` segments (0 is taken as 1), vertices in left/right pairs
/// across the width axis `normalize(direction × normal)` with the width tapering linearly along the
/// arc to a single tip vertex (last). Triangles wind counter-clockwise seen from the normal's side.
/// With `bend = 0` the tip is at `position + length · height_scale · direction` and the area is
/// exactly `width · length · height_scale / 2`; bending keeps the arc length (see [`blade_spine`]).
pub fn blade_mesh(b: &Blade, segments: u32, height_scale: f32) -> (Vec<[f32; 3]>, Vec<[u32; 3]>) {
    let s = segments.max(1);
    let d = b.direction.map(f64::from);
    let n = b.normal.map(f64::from);
    let axis = unit(cross(d, n)).unwrap_or([1.0, 0.0, 0.0]);
    let base = [f64::from(b.position[0]), f64::from(b.position[1]), 0.0];
    let spine = blade_spine(b, s, height_scale);
    let mut vertices = Vec::with_capacity(2 * s as usize + 1);
    for (i, p) in spine.iter().enumerate().take(s as usize) {
        let half = 0.5 * f64::from(b.width) * (1.0 - i as f64 / f64::from(s));
        for side in [-1.0, 1.0] {
            vertices.push([0, 1, 2].map(|c| (base[c] + p[c] + side * half * axis[c]) as f32));
        }
    }
    let tip = spine[s as usize];
    vertices.push([0, 1, 2].map(|c| (base[c] + tip[c]) as f32));
    let mut triangles = Vec::with_capacity(2 * s as usize - 1);
    for i in 0..s - 1 {
        let (l0, r0, l1, r1) = (2 * i, 2 * i + 1, 2 * i + 2, 2 * i + 3);
        triangles.push([l0, r0, r1]);
        triangles.push([l0, r1, l1]);
    }
    triangles.push([2 * (s - 1), 2 * (s - 1) + 1, 2 * s]);
    (vertices, triangles)
}
