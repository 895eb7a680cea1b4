//! The 256-case marching-cubes table, derived at compile time from first principles.
//!
//! Nothing here is copied from a published table. For every corner-sign case the surface is
//! built face by face:
//!
//! 1. On each of the six cube faces, the crossed face edges are paired into segments. A face
//!    has 0, 2 or 4 crossed edges; with 4 (the ambiguous "diagonal" face) the fixed rule is
//!    **solid corners on the diagonal are connected**, i.e. the two segments cut off the two
//!    air corners. The rule reads only the face's four corner signs, so two cubes sharing a
//!    face (in one tile or in neighbouring tiles) always draw the same segments on it, which
//!    is what makes the surface watertight.
//! 2. Each segment is oriented so that, seen from outside the cube through that face, solid
//!    lies on a fixed side of it. Every crossed edge lies on exactly two faces and ends
//!    exactly one segment on each, so the oriented segments chain into closed loops.
//! 3. The orientation is chosen so that each loop runs counter-clockwise seen from air, so a
//!    fan over it yields front faces toward air. The fan's apex is the first loop vertex whose
//!    diagonals all cross the cube's interior ([`fan_apex`]): a diagonal between two vertices
//!    on one face could coincide with a diagonal of the neighbouring cube.
//!
//! Fan triangles are never degenerate in exact arithmetic: all loop vertices lie on the cube's
//! surface, so three collinear ones would have to lie on one face, and three points strictly
//! inside three different sides of a square are never collinear.

/// Most triangles any case produces (checked by the derivation; classic MC also peaks at 5).
pub(super) const MAX_TRIS: usize = 5;

/// Cube corner `c` sits at offset `(c & 1, c >> 1 & 1, c >> 2 & 1)` from the cell's first corner.
/// Cube edge `e` runs along axis `e / 4` from corner [`EDGE_START`]`[e]` to that corner plus
/// one step along the axis. Edges are numbered axis-major; within an axis by the offsets of
/// the two other axes (lower axis in bit 0).
pub(super) const EDGE_START: [u8; 12] = {
    let mut t = [0u8; 12];
    let mut e = 0;
    while e < 12 {
        let k = (e & 3) as u8;
        let (lo, hi) = (k & 1, k >> 1);
        t[e] = match e / 4 {
            0 => (lo << 1) | (hi << 2),
            1 => lo | (hi << 2),
            _ => lo | (hi << 1),
        };
        e += 1;
    }
    t
};

/// One case: which cube edges carry a vertex, and the triangles over them (local edge ids,
/// counter-clockwise seen from air).
#[derive(Clone, Copy, Debug)]
pub(super) struct Case {
    /// Bit `e` set when edge `e` is crossed.
    pub edges: u16,
    /// Number of valid entries in `tris`.
    pub ntris: u8,
    pub tris: [[u8; 3]; MAX_TRIS],
}

/// Case `c` has corner `i` solid when bit `i` of `c` is set.
pub(super) static CASES: [Case; 256] = build_cases();

const fn edge_axis(e: usize) -> usize {
    e / 4
}

/// The edge joining two corners that differ in exactly one bit.
const fn edge_between(a: usize, b: usize) -> usize {
    let lo = if a < b { a } else { b };
    let axis = (a ^ b).trailing_zeros() as usize;
    let mut e = axis * 4;
    while e < axis * 4 + 4 {
        if EDGE_START[e] as usize == lo {
            return e;
        }
        e += 1;
    }
    panic!("corners are not joined by a cube edge");
}

/// Corner position scaled by 4, so edge midpoints and segment midpoints stay integral.
const fn corner_pos(c: usize) -> [i32; 3] {
    [4 * (c & 1) as i32, 4 * ((c >> 1) & 1) as i32, 4 * ((c >> 2) & 1) as i32]
}

const fn edge_mid(e: usize) -> [i32; 3] {
    let mut p = corner_pos(EDGE_START[e] as usize);
    p[edge_axis(e)] += 2;
    p
}

const fn sub(a: [i32; 3], b: [i32; 3]) -> [i32; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

/// `(a × b) · n`.
const fn triple(a: [i32; 3], b: [i32; 3], n: [i32; 3]) -> i32 {
    (a[1] * b[2] - a[2] * b[1]) * n[0] + (a[2] * b[0] - a[0] * b[2]) * n[1] + (a[0] * b[1] - a[1] * b[0]) * n[2]
}

const NONE: u8 = u8::MAX;

const fn is_solid(case: usize, corner: usize) -> bool {
    (case >> corner) & 1 == 1
}

/// Links `from → to` for the oriented segment joining face-cycle sides `i` and `j`.
///
/// `cyc` lists the face's corners in cyclic order, side `k` joins `cyc[k]` and `cyc[k+1]`.
const fn add_segment(case: usize, cyc: [usize; 4], normal: [i32; 3], i: usize, j: usize, next: &mut [u8; 12]) {
    let ei = edge_between(cyc[i], cyc[(i + 1) % 4]);
    let ej = edge_between(cyc[j], cyc[(j + 1) % 4]);
    let (p, q) = (edge_mid(ei), edge_mid(ej));
    let m = [(p[0] + q[0]) / 2, (p[1] + q[1]) / 2, (p[2] + q[2]) / 2];
    // `toward_solid`: any vector from the segment into the face's solid side.
    let toward_solid = match (j + 4 - i) % 4 {
        1 | 3 => {
            // Adjacent sides: the segment cuts off the corner they share.
            let shared = if (j + 4 - i) % 4 == 1 { cyc[j] } else { cyc[i] };
            let d = sub(corner_pos(shared), m);
            if is_solid(case, shared) {
                d
            } else {
                [-d[0], -d[1], -d[2]]
            }
        }
        _ => {
            // Opposite sides: the segment splits the face 2|2; every solid corner is on one side.
            let mut k = 0;
            while !is_solid(case, cyc[k]) {
                k += 1;
            }
            sub(corner_pos(cyc[k]), m)
        }
    };
    // A loop running counter-clockwise seen from air has the polygon's interior (inside the
    // cube, i.e. against the outward face normal) on its left. With the in-face part of the
    // surface normal pointing away from solid, that is `(toward_solid × dir) · normal > 0`.
    let s = triple(toward_solid, sub(q, p), normal);
    assert!(s != 0, "segment orientation is undetermined");
    let (from, to) = if s > 0 { (ei, ej) } else { (ej, ei) };
    assert!(next[from] == NONE, "edge starts two segments");
    next[from] = to as u8;
}

/// True when edges `a` and `b` lie on a common cube face.
pub(super) const fn share_face(a: usize, b: usize) -> bool {
    let (sa, sb) = (EDGE_START[a] as usize, EDGE_START[b] as usize);
    let mut axis = 0;
    while axis < 3 {
        if axis != edge_axis(a) && axis != edge_axis(b) && (sa >> axis) & 1 == (sb >> axis) & 1 {
            return true;
        }
        axis += 1;
    }
    false
}

/// The first loop position from which a fan draws no diagonal between two vertices on a
/// common cube face.
///
/// Such a diagonal would lie in the face plane, where the neighbouring cube may draw the very
/// same edge: four triangles on one edge instead of two. A diagonal between vertices on no
/// common face belongs to this cube alone. Every loop of every case has such an apex (the
/// derivation asserts it).
const fn fan_apex(lp: &[usize; 12], n: usize) -> usize {
    let mut apex = 0;
    while apex < n {
        let mut ok = true;
        let mut k = 2;
        while k + 1 < n {
            if share_face(lp[apex], lp[(apex + k) % n]) {
                ok = false;
            }
            k += 1;
        }
        if ok {
            return apex;
        }
        apex += 1;
    }
    panic!("loop has no fan apex free of in-face diagonals");
}

const fn build_case(case: usize) -> Case {
    let mut next = [NONE; 12];
    let mut axis = 0;
    while axis < 3 {
        let (u, v) = ((axis + 1) % 3, (axis + 2) % 3);
        let (u, v) = if u < v { (u, v) } else { (v, u) };
        let mut side = 0;
        while side < 2 {
            let base = side << axis;
            let cyc = [base, base | (1 << u), base | (1 << u) | (1 << v), base | (1 << v)];
            let mut normal = [0; 3];
            normal[axis] = 2 * side as i32 - 1;
            let mut crossed = [0usize; 4];
            let mut n = 0;
            let mut k = 0;
            while k < 4 {
                if is_solid(case, cyc[k]) != is_solid(case, cyc[(k + 1) % 4]) {
                    crossed[n] = k;
                    n += 1;
                }
                k += 1;
            }
            if n == 2 {
                add_segment(case, cyc, normal, crossed[0], crossed[1], &mut next);
            } else if n == 4 {
                // Ambiguous face: keep the solid diagonal connected by cutting off both air corners.
                if is_solid(case, cyc[0]) {
                    add_segment(case, cyc, normal, 0, 1, &mut next);
                    add_segment(case, cyc, normal, 2, 3, &mut next);
                } else {
                    add_segment(case, cyc, normal, 3, 0, &mut next);
                    add_segment(case, cyc, normal, 1, 2, &mut next);
                }
            }
            side += 1;
        }
        axis += 1;
    }

    let mut out = Case { edges: 0, ntris: 0, tris: [[0; 3]; MAX_TRIS] };
    let mut e = 0;
    while e < 12 {
        if next[e] != NONE {
            out.edges |= 1 << e;
        }
        e += 1;
    }
    // Walk each loop from its smallest edge and fan-triangulate it.
    let mut visited = 0u16;
    let mut start = 0;
    while start < 12 {
        if next[start] != NONE && visited & (1 << start) == 0 {
            let mut lp = [0usize; 12];
            let mut n = 0;
            let mut cur = start;
            loop {
                assert!(visited & (1 << cur) == 0, "segments do not form simple loops");
                visited |= 1 << cur;
                lp[n] = cur;
                n += 1;
                cur = next[cur] as usize;
                if cur == start {
                    break;
                }
            }
            let apex = fan_apex(&lp, n);
            let mut i = 1;
            while i + 1 < n {
                assert!((out.ntris as usize) < MAX_TRIS, "MAX_TRIS is too small");
                let (a, b, c) = (lp[apex], lp[(apex + i) % n], lp[(apex + i + 1) % n]);
                out.tris[out.ntris as usize] = [a as u8, b as u8, c as u8];
                out.ntris += 1;
                i += 1;
            }
        }
        start += 1;
    }
    assert!(visited == out.edges, "a crossed edge has no outgoing segment");
    out
}

const fn build_cases() -> [Case; 256] {
    let mut t = [Case { edges: 0, ntris: 0, tris: [[0; 3]; MAX_TRIS] }; 256];
    let mut c = 0;
    while c < 256 {
        t[c] = build_case(c);
        c += 1;
    }
    t
}
