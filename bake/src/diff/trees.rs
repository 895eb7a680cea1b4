//! Tree comparisons of `kiln diff` that are not images: prototypes' meshes (`TPRO`), a tile's
//! instances (`TINS`) and their baked lighting (`TILT`).

use std::collections::BTreeMap;

use kiln_formats::sections::{TreeInstance, TreeInstances, TreeLighting, TreePrototype, TreePrototypes};
use kiln_formats::{FormatError, Section};
use serde_json::json;

use super::kinds::{exceeds, irradiance_of, Context, Judged};
use super::symmetric_distance;

/// Instances beyond which nearest matching (quadratic) is not tried: in-order matching only.
const NEAREST_LIMIT: usize = 4096;

fn dist(a: [f32; 3], b: [f32; 3]) -> f64 {
    let d: f64 = (0..3).map(|k| (f64::from(a[k]) - f64::from(b[k])).powi(2)).sum();
    d.sqrt()
}

fn max_abs<const N: usize>(a: &[[f32; N]], b: &[[f32; N]]) -> f64 {
    a.iter().zip(b).flat_map(|(x, y)| x.iter().zip(y).map(|(p, q)| (f64::from(*p) - f64::from(*q)).abs())).fold(0.0, f64::max)
}

/// One prototype's mesh distance and per-vertex field differences (zero fields when the topology
/// changed: then only the surface distance is meaningful).
fn prototype(a: &TreePrototype, b: &TreePrototype) -> (f64, [f64; 3]) {
    let same_topology = a.positions.len() == b.positions.len() && a.bark_indices == b.bark_indices && a.leaf_indices == b.leaf_indices;
    if same_topology {
        let d = a.positions.iter().zip(&b.positions).map(|(p, q)| dist(*p, *q)).fold(0.0, f64::max);
        let ao = a.ao.iter().zip(&b.ao).map(|(x, y)| f64::from(x.abs_diff(*y)) / 255.0).fold(0.0, f64::max);
        return (d, [max_abs(&a.normals, &b.normals), max_abs(&a.uvs, &b.uvs), ao]);
    }
    let all = |p: &TreePrototype| p.bark_indices.iter().chain(&p.leaf_indices).copied().collect::<Vec<u32>>();
    let (max, _) = symmetric_distance(&a.positions, &all(a), &b.positions, &all(b), 4096);
    (f64::from(max), [0.0; 3])
}

/// `TPRO`: species and prototype counts must match; per prototype, vertex and triangle counts, the
/// largest vertex distance (same topology) or symmetric surface distance (changed topology), height
/// and crown radius as distances, and normals, texture coordinates and AO as fields.
pub(super) fn prototypes(x: &[u8], y: &[u8], cx: &Context) -> Result<Judged, FormatError> {
    let (a, b) = (TreePrototypes::decode(x)?, TreePrototypes::decode(y)?);
    let mut details = BTreeMap::new();
    details.insert("prototypes".into(), json!([a.prototypes.len(), b.prototypes.len()]));
    let count = |p: &TreePrototypes| {
        (
            p.prototypes.iter().map(|t| t.positions.len()).sum::<usize>(),
            p.prototypes.iter().map(|t| (t.bark_indices.len() + t.leaf_indices.len()) / 3).sum::<usize>(),
        )
    };
    let (ca, cb) = (count(&a), count(&b));
    details.insert("vertices".into(), json!([ca.0, cb.0]));
    details.insert("triangles".into(), json!([ca.1, cb.1]));
    let mut structural = Vec::new();
    if a.species != b.species {
        details.insert("species".into(), json!([a.species, b.species]));
        structural.push("species".to_owned());
    }
    if a.prototypes.len() != b.prototypes.len() {
        structural.push("prototype count".to_owned());
    }
    let (mut distance, mut worst, mut fields, mut recounted) = (0f64, 0usize, [0f64; 3], Vec::new());
    for (i, (p, q)) in a.prototypes.iter().zip(&b.prototypes).enumerate() {
        if (p.species, p.seed) != (q.species, q.seed) {
            structural.push(format!("prototype {i}: species/seed {:?} vs {:?}", (p.species, p.seed), (q.species, q.seed)));
        }
        let tris = |t: &TreePrototype| t.lods.map(|l| (l.bark_index_count + l.leaf_index_count) / 3);
        if p.lods != q.lods || p.positions.len() != q.positions.len() {
            recounted.push(format!(
                "prototype {i}: {} vs {} vertices, LOD triangles {:?} vs {:?}",
                p.positions.len(),
                q.positions.len(),
                tris(p),
                tris(q)
            ));
        }
        let (d, f) = prototype(p, q);
        let d = d.max(f64::from((p.height - q.height).abs())).max(f64::from((p.crown_radius - q.crown_radius).abs()));
        if d > distance {
            (distance, worst) = (d, i);
        }
        fields = [0, 1, 2].map(|k| fields[k].max(f[k]));
    }
    details.insert("distance_max".into(), json!(distance));
    details.insert("worst_prototype".into(), json!(worst));
    if !recounted.is_empty() {
        details.insert("counts_changed".into(), json!(recounted.len()));
        details.insert("counts".into(), json!(recounted.iter().take(10).collect::<Vec<_>>()));
    }
    for (name, v) in ["normal_max_abs", "uv_max_abs", "ao_max_abs"].into_iter().zip(fields) {
        details.insert(name.into(), json!(v));
    }
    if !structural.is_empty() {
        details.insert("structure".into(), json!(structural.iter().take(20).collect::<Vec<_>>()));
        return Ok(Judged { beyond: true, magnitude: f64::INFINITY, details });
    }
    let field = fields.into_iter().fold(0.0, f64::max);
    let beyond = exceeds(distance, cx.tol.distance) || exceeds(field, cx.tol.field_max);
    Ok(Judged { beyond, magnitude: distance.max(field), details })
}

/// Instance pairs `(a, b)`: in order, or each of `a` with its nearest of `b` when that is closer.
fn matching(a: &[TreeInstance], b: &[TreeInstance], tol: f32) -> (Vec<(usize, usize)>, &'static str, f64) {
    let in_order: Vec<(usize, usize)> = (0..a.len()).map(|i| (i, i)).collect();
    let worst = |pairs: &[(usize, usize)]| pairs.iter().map(|&(i, j)| dist(a[i].position, b[j].position)).fold(0.0, f64::max);
    let ordered = worst(&in_order);
    if !exceeds(ordered, tol) || a.len() > NEAREST_LIMIT {
        return (in_order, "in order", ordered);
    }
    let nearest = |from: &[TreeInstance], to: &[TreeInstance]| -> Vec<usize> {
        from.iter()
            .map(|p| (0..to.len()).min_by(|&j, &k| dist(p.position, to[j].position).total_cmp(&dist(p.position, to[k].position))).unwrap_or(0))
            .collect()
    };
    let pairs: Vec<(usize, usize)> = nearest(a, b).into_iter().enumerate().collect();
    // Symmetric: a tree of `b` far from every tree of `a` counts too.
    let back = nearest(b, a).into_iter().enumerate().map(|(j, i)| dist(a[i].position, b[j].position)).fold(0.0, f64::max);
    let near = worst(&pairs).max(back);
    if near < ordered {
        (pairs, "nearest", near)
    } else {
        (in_order, "in order", ordered)
    }
}

/// `TINS`: equal counts, then the largest position distance of matched instances (a distance), their
/// yaw (radians, wrapped), scale and tint differences (fields), and instances whose prototype changed.
pub(super) fn instances(x: &[u8], y: &[u8], cx: &Context) -> Result<Judged, FormatError> {
    let (a, b) = (TreeInstances::decode(x)?, TreeInstances::decode(y)?);
    let mut details = BTreeMap::new();
    details.insert("instances".into(), json!([a.instances.len(), b.instances.len()]));
    if a.prototypes_hash != b.prototypes_hash {
        details.insert("prototypes_pack".into(), json!([format!("{:016x}", a.prototypes_hash), format!("{:016x}", b.prototypes_hash)]));
    }
    if a.instances.len() != b.instances.len() {
        details.insert("note".into(), json!("instance counts differ"));
        return Ok(Judged { beyond: true, magnitude: f64::INFINITY, details });
    }
    let (pairs, how, distance) = matching(&a.instances, &b.instances, cx.tol.distance);
    let (mut yaw, mut scale, mut tint, mut swapped) = (0f64, 0f64, 0f64, 0usize);
    for &(i, j) in &pairs {
        let (p, q) = (&a.instances[i], &b.instances[j]);
        let turn = (f64::from(p.yaw) - f64::from(q.yaw)).rem_euclid(std::f64::consts::TAU);
        yaw = yaw.max(turn.min(std::f64::consts::TAU - turn));
        scale = scale.max((f64::from(p.scale) - f64::from(q.scale)).abs());
        tint = tint.max(max_abs(&[p.tint], &[q.tint]));
        swapped += usize::from(p.prototype != q.prototype);
    }
    details.insert("matching".into(), json!(how));
    details.insert("distance_max".into(), json!(distance));
    details.insert("yaw_max".into(), json!(yaw));
    details.insert("scale_max".into(), json!(scale));
    details.insert("tint_max".into(), json!(tint));
    details.insert("prototype_changes".into(), json!(swapped));
    let field = yaw.max(scale).max(tint);
    let beyond = swapped > 0 || exceeds(distance, cx.tol.distance) || exceeds(field, cx.tol.field_max);
    Ok(Judged { beyond, magnitude: distance.max(field), details })
}

/// `TILT`: as vertex irradiance (max abs, RMS, PSNR against the field tolerances), per instance, plus
/// the largest difference relative to the brighter side.
pub(super) fn lighting(x: &[u8], y: &[u8], cx: &Context) -> Result<Judged, FormatError> {
    let flat = |raw: &[u8]| {
        TreeLighting::decode(raw).map(|l| (l.0.iter().flatten().flatten().copied().collect::<Vec<f32>>(), format!("{} instances", l.0.len())))
    };
    let (a, b) = (flat(x)?, flat(y)?);
    let relative = a.0.iter().zip(&b.0).map(|(p, q)| {
        let (p, q) = (f64::from(*p), f64::from(*q));
        if p == q {
            0.0
        } else {
            (p - q).abs() / p.abs().max(q.abs())
        }
    });
    let relative = if a.0.len() == b.0.len() { Some(relative.fold(0.0, f64::max)) } else { None };
    let mut j = irradiance_of(a, b, cx, TreeInstances::KIND)?;
    if let Some(r) = relative {
        j.details.insert("max_relative".into(), json!(r));
    }
    Ok(j)
}

#[cfg(test)]
#[path = "trees_tests.rs"]
mod tests;
