// Per-frame selection of grass blades (layers::grass::select mirrors it on the CPU): one thread per
// blade of a candidate (instance, level) job; a kept blade whose own threshold is passed and none of
// whose ancestors passed theirs, within the cutoff and the frustum, is appended to its level's list.

struct Job {
    origin: vec2<f32>,
    height_scale: f32,
    tile: u32,
    key: u32,
    misc: u32,      // rotation | level << 2 (level == levels: the patch's flowers)
    first: u32,
    count: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> blades: array<Blade>;
@group(0) @binding(2) var<storage, read> flowers: array<Flower>;
@group(0) @binding(3) var<storage, read> samples: array<u32>;
@group(0) @binding(4) var<storage, read> tiles: array<TileInfo>;
@group(0) @binding(5) var<storage, read> jobs: array<Job>;
@group(0) @binding(6) var<storage, read> chunks: array<vec2<u32>>;
@group(0) @binding(7) var<storage, read_write> args: array<atomic<u32>>;
@group(0) @binding(8) var<storage, read_write> entries: array<Entry>;
@group(0) @binding(9) var<storage, read> regions: array<u32>;

struct Ground {
    z: f32,
    keep: f32,
    light: vec3<f32>,
}

fn word(t: TileInfo, i: u32, j: u32, w: u32) -> u32 {
    return samples[t.base + (j * t.size + i) * 3u + w];
}

// Bilinear and clamped, as kiln_formats::sections::GrassTile::height_at and keep_at.
fn ground(t: TileInfo, q: vec2<f32>) -> Ground {
    let last = f32(t.size - 1u);
    let u = clamp((q.x - t.origin.x) / t.spacing, 0.0, last);
    let v = clamp((q.y - t.origin.y) / t.spacing, 0.0, last);
    let i = min(u32(u), t.size - 2u);
    let j = min(u32(v), t.size - 2u);
    let fu = u - f32(i);
    let fv = v - f32(j);
    var g: Ground;
    let h00 = bitcast<f32>(word(t, i, j, 0u));
    let h10 = bitcast<f32>(word(t, i + 1u, j, 0u));
    let h01 = bitcast<f32>(word(t, i, j + 1u, 0u));
    let h11 = bitcast<f32>(word(t, i + 1u, j + 1u, 0u));
    g.z = (h00 * (1.0 - fu) + h10 * fu) * (1.0 - fv) + (h01 * (1.0 - fu) + h11 * fu) * fv;
    let k00 = f32(word(t, i, j, 1u)) / 255.0;
    let k10 = f32(word(t, i + 1u, j, 1u)) / 255.0;
    let k01 = f32(word(t, i, j + 1u, 1u)) / 255.0;
    let k11 = f32(word(t, i + 1u, j + 1u, 1u)) / 255.0;
    g.keep = (k00 * (1.0 - fu) + k10 * fu) * (1.0 - fv) + (k01 * (1.0 - fu) + k11 * fu) * fv;
    // Between samples across a cliff (the topmost ground jumps) a base would hang in the air.
    if (max(max(h00, h10), max(h01, h11)) - min(min(h00, h10), min(h01, h11)) > CLIFF * t.spacing) {
        g.keep = 0.0;
    }
    let l0 = mix(rgb9e5(word(t, i, j, 2u)), rgb9e5(word(t, i + 1u, j, 2u)), fu);
    let l1 = mix(rgb9e5(word(t, i, j + 1u, 2u)), rgb9e5(word(t, i + 1u, j + 1u, 2u)), fu);
    g.light = mix(l0, l1, fv);
    return g;
}

fn world_xy(job: Job, p: vec2<f32>) -> vec2<f32> {
    let c = 0.5 * params.patch_size;
    return job.origin + vec2<f32>(c) + rotate(p - vec2<f32>(c), job.misc & 3u);
}

fn threshold(k: u32, key: u32, local: u32) -> f32 {
    return switch_at(k) * (1.0 + params.stagger * (2.0 * unit(hash3(key ^ SALT_THRESHOLD, k, local)) - 1.0));
}

fn visible(c: vec3<f32>, r: f32) -> bool {
    for (var i = 0u; i < 6u; i++) {
        let p = params.planes[i];
        if (dot(p.xyz, c) + p.w < -r * length(p.xyz)) {
            return false;
        }
    }
    return true;
}

fn append(list: u32, e: Entry) {
    let slot = atomicAdd(&args[list * 4u + 1u], 1u);
    entries[regions[list] + slot] = e;
}

@compute @workgroup_size(64)
fn cs_select(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lane: u32, @builtin(num_workgroups) nwg: vec3<u32>) {
    let c = wg.x + wg.y * nwg.x;
    if (c >= arrayLength(&chunks)) {
        return;
    }
    let chunk = chunks[c];
    let job = jobs[chunk.x];
    let local = chunk.y + lane;
    if (local >= job.count) {
        return;
    }
    let t = tiles[job.tile];
    let k = (job.misc >> 2u) & 31u;
    let levels = params.levels;
    let eye = params.eye.xyz;
    var e: Entry;
    e.tile = job.tile;
    if (k == levels) {
        // A flower: near only, switched off with level 0 (the threshold of level 1, its own hash).
        let f = flowers[job.first + local];
        let q = world_xy(job, f.base.xy);
        let g = ground(t, q);
        let pos = vec3<f32>(q, g.z);
        let d = distance(pos, eye);
        if (params.force > 0) {
            return;
        }
        var off = params.distance;
        if (params.force < 0 && levels > 1u) {
            off = threshold(1u, job.key ^ FLOWER_KEY, local);
        }
        if (unit(hash3(job.key ^ FLOWER_KEY, 0u, local)) >= g.keep || d >= off || !visible(pos, (f.base.z + f.base.w) * job.height_scale)) {
            return;
        }
        e.pos = pos;
        e.item = job.first + local;
        e.light_rg = pack2x16float(g.light.rg);
        e.light_b_morph = pack2x16float(vec2<f32>(g.light.b, 0.0));
        e.misc = (job.misc & 0x7fu) | (pack2x16float(vec2<f32>(job.height_scale, 0.0)) << 16u);
        append(levels, e);
        return;
    }
    let gi = job.first + local;
    let b = blades[gi];
    let q = world_xy(job, b.base.xy);
    let g = ground(t, q);
    let pos = vec3<f32>(q, g.z);
    if (unit(hash3(job.key, k, local)) >= g.keep) {
        return;
    }
    let d = distance(pos, eye);
    let by_distance = params.force < 0;
    if (by_distance && k > 0u && d < threshold(k, job.key, local)) {
        return;
    }
    var a = b.parent;
    var a_local = local;
    var a_dist = d;
    var parent_pos = pos;
    var parent_t = 0.0;
    for (var j = k + 1u; j < levels; j++) {
        let ab = blades[a];
        a_local = u32(ab.color.w);
        let aq = world_xy(job, ab.base.xy);
        let apos = vec3<f32>(aq, ground(t, aq).z);
        a_dist = distance(apos, eye);
        let tj = threshold(j, job.key, a_local);
        if (by_distance && a_dist >= tj) {
            return;
        }
        if (j == k + 1u) {
            parent_pos = apos;
            parent_t = tj;
        }
        a = ab.parent;
    }
    if (a_dist >= params.distance * (1.0 + CUT_STAGGER * (2.0 * unit(hash3(job.key ^ SALT_CUTOFF, levels - 1u, a_local)) - 1.0))) {
        return;
    }
    if (!visible(pos, b.base.z * job.height_scale + b.base.w)) {
        return;
    }
    var m = 0.0;
    if (by_distance && k + 1u < levels) {
        m = smoothstep((1.0 - MORPH_BAND) * parent_t, parent_t, distance(parent_pos, eye));
    }
    e.pos = mix(pos, parent_pos, m);
    e.item = gi;
    e.light_rg = pack2x16float(g.light.rg);
    e.light_b_morph = pack2x16float(vec2<f32>(g.light.b, m));
    e.misc = (job.misc & 0x7fu) | (pack2x16float(vec2<f32>(job.height_scale, 0.0)) << 16u);
    append(k, e);
}
