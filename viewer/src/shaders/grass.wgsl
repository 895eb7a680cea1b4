// Grass: the blades the selection (grass_select.wgsl) appended, one indirect draw per level, pulled
// from storage (vertex_index → strip vertex, instance_index → entry); flowers; and the ground tint
// over every resident tile's grass map. Compiled after common.wgsl, sunlight.wgsl and grass_common.wgsl.

override MODE: u32 = 0u;   // 0 lit, 1 colour by level, 2 normals, 3 ground light only

@group(1) @binding(0) var<uniform> params: Params;
@group(1) @binding(1) var<storage, read> blades: array<Blade>;
@group(1) @binding(2) var<storage, read> flowers: array<Flower>;
@group(1) @binding(3) var<storage, read> entries: array<Entry>;
@group(1) @binding(4) var<storage, read> tiles: array<TileInfo>;
@group(1) @binding(5) var<storage, read> samples: array<u32>;
@group(2) @binding(0) var shadow_map: texture_depth_2d;
@group(2) @binding(1) var shadow_sampler: sampler_comparison;

const LEVEL_COLORS = array<vec3<f32>, 8>(
    vec3<f32>(0.90, 0.20, 0.15), vec3<f32>(0.20, 0.85, 0.25), vec3<f32>(0.20, 0.35, 0.95), vec3<f32>(0.95, 0.85, 0.15),
    vec3<f32>(0.85, 0.25, 0.90), vec3<f32>(0.15, 0.85, 0.90), vec3<f32>(0.95, 0.55, 0.15), vec3<f32>(0.85, 0.85, 0.85),
);

struct Vary {
    @builtin(position) clip: vec4<f32>,
    @location(0) world: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) color: vec3<f32>,
    @location(3) light: vec3<f32>,
    @location(4) t: f32,
    @location(5) @interpolate(flat) level: u32,
    @location(6) @interpolate(flat) pick: u32,
    @location(7) uv: vec2<f32>,
}

fn rotate3(v: vec3<f32>, r: u32) -> vec3<f32> {
    return vec3<f32>(rotate(v.xy, r), v.z);
}

// Wind: a couple of travelling waves over the world; the tip moves most (∝ t²).
fn wind(p: vec2<f32>) -> vec2<f32> {
    let tm = params.time;
    let a = sin(dot(p, vec2<f32>(0.21, 0.13)) + 1.7 * tm) + 0.5 * sin(dot(p, vec2<f32>(-0.37, 0.52)) + 2.9 * tm);
    let b = 0.4 * sin(dot(p, vec2<f32>(0.11, -0.29)) + 1.3 * tm);
    return vec2<f32>(0.8, 0.45) * (0.6 + 0.4 * a) * 0.22 + vec2<f32>(-0.45, 0.8) * b * 0.12;
}

// The blade's centre line (layers::grass, kiln's blade_spine): chords of L·(t·d + bend·t²·h), each
// of length L/S, so bending keeps the arc length and the area w·l/2.
fn spine(d: vec3<f32>, h: vec3<f32>, len: f32, bend: f32, s: u32, row: u32) -> vec3<f32> {
    var p = vec3<f32>(0.0);
    let fs = f32(s);
    for (var j = 0u; j < row; j++) {
        let t0 = f32(j) / fs;
        let t1 = f32(j + 1u) / fs;
        let c = (t1 - t0) * d + bend * (t1 * t1 - t0 * t0) * h;
        p += (len / fs) * normalize(c);
    }
    return p;
}

@vertex
fn vs_blade(@builtin(vertex_index) vi: u32, @builtin(instance_index) ii: u32) -> Vary {
    let e = entries[ii];
    let b = blades[e.item];
    let rot = e.misc & 3u;
    let level = (e.misc >> 2u) & 31u;
    let hs = unpack2x16float(e.misc >> 16u).x;
    let lm = unpack2x16float(e.light_b_morph);
    let m = lm.y;
    var d = rotate3(b.dir.xyz, rot);
    var n = rotate3(b.normal, rot);
    var len = b.base.z * hs;
    var bend = b.dir.w;
    var color = b.color.rgb;
    if (m > 0.0 && b.parent != NO_PARENT) {
        let p = blades[b.parent];
        d = normalize(mix(d, rotate3(p.dir.xyz, rot), m));
        n = normalize(mix(n, rotate3(p.normal, rot), m));
        len = mix(len, p.base.z * hs, m);
        bend = mix(bend, p.dir.w, m);
        color = mix(color, p.color.rgb, m);
    }
    let s = max(segments_at(level), 1u);
    let row = min(vi / 2u, s);
    let t = f32(row) / f32(s);
    var side = select(-1.0, 1.0, (vi & 1u) == 1u);
    if (row == s) {
        side = 0.0;
    }
    var h = vec3<f32>(d.xy, 0.0);
    if (dot(h.xy, h.xy) < 1e-8) {
        h = vec3<f32>(n.xy, 0.0);
    }
    h = select(vec3<f32>(0.0), normalize(h), dot(h.xy, h.xy) > 1e-12);
    var axis = cross(d, n);
    axis = select(vec3<f32>(1.0, 0.0, 0.0), normalize(axis), dot(axis, axis) > 1e-12);
    let half_w = 0.5 * b.base.w * (1.0 - t);
    var world = e.pos + spine(d, h, len, bend, s, row) + side * half_w * axis;
    world += vec3<f32>(wind(e.pos.xy) * len * t * t, 0.0);
    var o: Vary;
    o.clip = frame.view_proj * vec4<f32>(world, 1.0);
    o.world = world;
    // Tilted toward the tip's lean, so a field shades with some depth.
    o.normal = n;
    o.color = color;
    o.light = vec3<f32>(unpack2x16float(e.light_rg), lm.x);
    o.t = t;
    o.level = level;
    o.pick = tiles[e.tile].pick;
    o.uv = vec2<f32>(side, t);
    return o;
}

fn lit(world: vec3<f32>, n_in: vec3<f32>, albedo: vec3<f32>, light: vec3<f32>, t: f32) -> vec3<f32> {
    var n = normalize(n_in);
    if (dot(n, frame.camera_pos.xyz - world) < 0.0) {
        n = -n;
    }
    let ndl = dot(n, frame.sun_dir.xyz);
    // Thin leaves: the sun through the blade (translucency) and a share that follows the sun's height
    // rather than the blade's own normal, so a field shades alike at every level of detail.
    let direct = 0.3 * (max(ndl, 0.0) + 0.6 * max(-ndl, 0.0)) + 0.58 * max(frame.sun_dir.z, 0.0);
    let vis = sun_visibility(world, vec3<f32>(0.0, 0.0, 1.0), 0.001);
    // Self-shadowing toward the base of the sward.
    let ao = mix(0.55, 1.0, t);
    return albedo * ao * (light + frame.sun_color.rgb * direct * vis);
}

@fragment
fn fs_blade(v: Vary) -> SceneOut {
    return blade_out(v);
}

fn blade_out(v: Vary) -> SceneOut {
    var c: vec3<f32>;
    if (MODE == 1u) {
        c = LEVEL_COLORS[v.level % 8u] * (0.55 + 0.45 * v.t);
    } else if (MODE == 2u) {
        c = normalize(v.normal) * 0.5 + 0.5;
    } else if (MODE == 3u) {
        c = tonemap(v.light);
    } else {
        c = tonemap(fog_over(lit(v.world, v.normal, v.color, v.light, v.t), v.world));
    }
    var o: SceneOut;
    o.color = vec4<f32>(c, 1.0);
    o.id = v.pick;
    return o;
}

// ---- flowers: a stem and a round head, both facing the camera ------------------------------------

@vertex
fn vs_flower(@builtin(vertex_index) vi: u32, @builtin(instance_index) ii: u32) -> Vary {
    let e = entries[ii];
    let f = flowers[e.item];
    let hs = unpack2x16float(e.misc >> 16u).x;
    let height = f.base.z * hs;
    let r = f.base.w;
    let corner = array<vec2<f32>, 6>(vec2<f32>(-1.0, 0.0), vec2<f32>(1.0, 0.0), vec2<f32>(1.0, 1.0), vec2<f32>(-1.0, 0.0), vec2<f32>(1.0, 1.0), vec2<f32>(-1.0, 1.0));
    let q = corner[vi % 6u];
    let head = vi >= 6u;
    let to_eye = frame.camera_pos.xyz - e.pos;
    let right = normalize(cross(vec3<f32>(0.0, 0.0, 1.0), to_eye) + vec3<f32>(1e-6, 0.0, 0.0));
    let up = normalize(cross(to_eye, right));
    let sway = vec3<f32>(wind(e.pos.xy) * height, 0.0);
    var world: vec3<f32>;
    var o: Vary;
    if (head) {
        let centre = e.pos + vec3<f32>(0.0, 0.0, height) + sway;
        world = centre + right * q.x * r + up * (q.y * 2.0 - 1.0) * r;
        o.color = f.color.rgb;
        o.uv = vec2<f32>(q.x, q.y * 2.0 - 1.0);
        o.t = 1.0;
    } else {
        world = e.pos + right * q.x * 0.2 * r + vec3<f32>(0.0, 0.0, q.y * height) + sway * q.y * q.y;
        o.color = vec3<f32>(0.10, 0.28, 0.05);
        o.uv = vec2<f32>(0.0);
        o.t = q.y;
    }
    o.clip = frame.view_proj * vec4<f32>(world, 1.0);
    o.world = world;
    o.normal = normalize(to_eye);
    o.light = vec3<f32>(unpack2x16float(e.light_rg), unpack2x16float(e.light_b_morph).x);
    o.level = 0u;
    o.pick = tiles[e.tile].pick;
    return o;
}

@fragment
fn fs_flower(v: Vary) -> SceneOut {
    if (dot(v.uv, v.uv) > 1.0) {
        discard;
    }
    return blade_out(v);
}

// ---- ground tint: the grass's mean colour over the grass map, beyond and under the blades -------

struct TintVary {
    @builtin(position) clip: vec4<f32>,
    @location(0) world: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) light: vec3<f32>,
    @location(3) keep: f32,
}

fn map_height(t: TileInfo, i: u32, j: u32) -> f32 {
    let ii = min(i, t.size - 1u);
    let jj = min(j, t.size - 1u);
    return bitcast<f32>(samples[t.base + (jj * t.size + ii) * 3u]);
}

// Every other sample (layers::grass::decode::TINT_STRIDE).
const TINT_STRIDE: u32 = 2u;

// Instance `ii` is tile `ii` of the table, drawn indexed (layers::grass::decode::tint_indices):
// vertex `vi` is point (vi mod side, vi div side) of the tile's tint grid, and only its cells with
// grass and no cliff across them have triangles.
@vertex
fn vs_tint(@builtin(vertex_index) vi: u32, @builtin(instance_index) ii: u32) -> TintVary {
    let t = tiles[ii];
    var o: TintVary;
    let st = TINT_STRIDE;
    let side = (t.size - 1u) / st + 1u;
    let i = (vi % side) * st;
    let j = (vi / side) * st;
    let k = t.base + (j * t.size + i) * 3u;
    let z = bitcast<f32>(samples[k]);
    let last = t.size - 1u;
    let i0 = select(i - st, 0u, i < st);
    let j0 = select(j - st, 0u, j < st);
    let i1 = min(i + st, last);
    let j1 = min(j + st, last);
    let dx = (map_height(t, i1, j) - map_height(t, i0, j)) / (f32(i1 - i0) * t.spacing);
    let dy = (map_height(t, i, j1) - map_height(t, i, j0)) / (f32(j1 - j0) * t.spacing);
    o.normal = normalize(vec3<f32>(-dx, -dy, 1.0));
    // Lifted a little off the terrain, which meshes the same ground with other vertices.
    o.world = vec3<f32>(t.origin + vec2<f32>(f32(i), f32(j)) * t.spacing, z + 0.02 + 0.1 * t.spacing * f32(st));
    o.clip = frame.view_proj * vec4<f32>(o.world, 1.0);
    o.keep = f32(samples[k + 1u]) / 255.0;
    o.light = rgb9e5(samples[k + 2u]);
    return o;
}

@fragment
fn fs_tint(v: TintVary) -> SceneOut {
    let alpha = v.keep * 0.85;
    if (alpha <= 0.0) {
        discard;
    }
    let n = normalize(v.normal);
    var c: vec3<f32>;
    if (MODE == 2u) {
        c = n * 0.5 + 0.5;
    } else if (MODE == 3u) {
        c = tonemap(v.light);
    } else {
        // What a field of blades averages to (lit() over random blade normals and the sward's
        // self-shadowing: 0.7 over the blade's area, nearer 1 at the grazing angles that see the tips),
        // so the tint beyond D continues the blades.
        let direct = 0.58 * max(frame.sun_dir.z, 0.0) + 0.22 * max(dot(n, frame.sun_dir.xyz), 0.0);
        let sun = frame.sun_color.rgb * direct * sun_visibility(v.world, n, 0.0005);
        c = tonemap(fog_over(0.9 * params.tint.rgb * (v.light + sun), v.world));
    }
    var o: SceneOut;
    o.color = vec4<f32>(c, alpha);
    o.id = 0u; // masked out by the pipeline
    return o;
}
