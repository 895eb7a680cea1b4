// Trees: instanced prototype meshes (bark one-sided, leaves two-sided and alpha-tested) and
// octahedral impostors (three frames blended, each intersected with the view ray by a march over
// its depth field, depth written from the blended surface point), with a complementary screen-space dither between neighbouring representations. No
// blending anywhere: alpha test and depth writes.

// 0 lit, 1 by representation, 2 AO, 3 normals, 4 indirect (`pipelines::shader_mode`).
override MODE: u32 = 0u;

struct Atlas {
    center: vec4<f32>,     // xyz bounding-sphere centre (object space), w radius
    params: vec4<u32>,     // grid, view_px, layout (0 octahedral, 1 hemi), mip levels
}

@group(1) @binding(0) var tex_a: texture_2d<f32>;       // bark | impostor albedo
@group(1) @binding(1) var tex_b: texture_2d<f32>;       // leaf | impostor normal + AO
@group(1) @binding(2) var tex_depth: texture_2d<f32>;   // impostor depth
@group(1) @binding(3) var repeat_sampler: sampler;
@group(1) @binding(4) var clamp_sampler: sampler;
@group(1) @binding(5) var dither_tex: texture_2d<f32>;
@group(1) @binding(6) var<uniform> atlas: Atlas;
@group(2) @binding(0) var shadow_map: texture_depth_2d;
@group(2) @binding(1) var shadow_sampler: sampler_comparison;

struct Instance {
    @location(4) pos_yaw: vec4<f32>,
    @location(5) scale_tint: vec4<f32>,
    @location(6) light_up: vec4<f32>,     // w: dither threshold t
    @location(7) light_down: vec4<f32>,   // w: 1 when baked
    @location(8) light_side: vec4<f32>,   // w: atlas mip
    @location(9) id: u32,
    @location(10) seed_rep: vec2<u32>,    // hash; representation | 256 for the farther copy
}

struct MeshVertex {
    @location(0) position: vec3<f32>,
    @location(1) normal: vec4<f32>,
    @location(2) uv: vec2<f32>,
    @location(3) ao: vec4<f32>,
}

// A tree's per-instance values as the fragment stage uses them.
struct Tree {
    tint: vec3<f32>,
    dither: f32,          // the cross-fade's threshold t (0: not fading)
    baked: bool,          // the bake lit this tree (else the hemisphere fallback)
    id: u32,
    seed_rep: vec2<u32>,
}

struct MeshVary {
    @builtin(position) clip: vec4<f32>,
    @location(0) world: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) uv: vec2<f32>,
    @location(3) ao: f32,
    @location(4) ambient: vec3<f32>,                           // baked irradiance for the normal, × AO
    @location(5) @interpolate(flat) tint: vec3<f32>,
    @location(6) @interpolate(flat) dither_baked: vec2<f32>,
    @location(7) @interpolate(flat) id: u32,
    @location(8) @interpolate(flat) seed_rep: vec2<u32>,
}

fn rotate_z(v: vec3<f32>, yaw: f32) -> vec3<f32> {
    let c = cos(yaw);
    let s = sin(yaw);
    return vec3<f32>(c * v.x - s * v.y, s * v.x + c * v.y, v.z);
}


fn mesh_tree(v: MeshVary) -> Tree {
    return Tree(v.tint, v.dither_baked.x, v.dither_baked.y > 0.5, v.id, v.seed_rep);
}

fn imp_tree(v: ImpVary) -> Tree {
    return Tree(v.tint, v.up.w, v.down.w > 0.5, v.id, v.seed_rep);
}

fn mesh_world(v: MeshVertex, i: Instance) -> vec3<f32> {
    return i.pos_yaw.xyz + rotate_z(v.position * i.scale_tint.x, i.pos_yaw.w);
}

// The ambient light varies smoothly over a mesh (a linear blend of three baked values by the
// normal), so the vertices compute it and the fragments interpolate one colour instead of
// carrying the three per-instance values: fewer varyings, which bound the mesh trees' draws.
fn mesh_vary(v: MeshVertex, i: Instance, two_sided: bool) -> MeshVary {
    var o: MeshVary;
    o.world = mesh_world(v, i);
    o.clip = frame.view_proj * vec4<f32>(o.world, 1.0);
    o.normal = rotate_z(v.normal.xyz, i.pos_yaw.w);
    o.uv = v.uv;
    o.ao = v.ao.x;
    var n = normalize(o.normal);
    // A leaf is lit on the side the eye sees (its fragments turn the normal the same way).
    if (two_sided && dot(n, frame.camera_pos.xyz - o.world) < 0.0) {
        n = -n;
    }
    o.ambient = ambient(i.light_up, i.light_down, i.light_side, n) * v.ao.x;
    o.tint = i.scale_tint.yzw;
    o.dither_baked = vec2<f32>(i.light_up.w, i.light_down.w);
    o.id = i.id;
    o.seed_rep = i.seed_rep;
    return o;
}

@vertex
fn vs_mesh(v: MeshVertex, i: Instance) -> MeshVary {
    return mesh_vary(v, i, false);
}

@vertex
fn vs_leaf(v: MeshVertex, i: Instance) -> MeshVary {
    return mesh_vary(v, i, true);
}

struct ShadowMeshVary {
    @builtin(position) clip: vec4<f32>,
    @location(0) uv: vec2<f32>,
}

@vertex
fn vs_mesh_shadow(v: MeshVertex, i: Instance) -> ShadowMeshVary {
    var o: ShadowMeshVary;
    o.clip = frame.light_view_proj * vec4<f32>(mesh_world(v, i), 1.0);
    o.uv = v.uv;
    return o;
}

@fragment
fn fs_leaf_shadow(v: ShadowMeshVary) {
    if (textureSampleLevel(tex_b, repeat_sampler, v.uv, 0.0).a < 0.5) {
        discard;
    }
}

// ---- dither, lighting ---------------------------------------------------------------------------

// The complementary cross-fade: the nearer representation keeps noise in [t, 1), the farther one
// [0, t); each tree reads the noise at its own offset.
fn dither_keep(pixel: vec2<f32>, t: Tree) -> bool {
    let thr = t.dither;
    if (thr <= 0.0) {
        return true;
    }
    let seed = t.seed_rep.x;
    let q = (vec2<u32>(pixel) + vec2<u32>(seed & 127u, (seed >> 7u) & 127u)) & vec2<u32>(127u);
    let n = (textureLoad(dither_tex, q, 0).r * 255.0 + 0.5) / 256.0;
    if ((t.seed_rep.y & 256u) != 0u) {
        return n < thr;
    }
    return n >= thr;
}

// Baked irradiance at the crown for normal n: lerp(side, up, n.z) above, lerp(side, down, -n.z)
// below; the hemisphere fallback where the bake has none.
fn ambient(up: vec4<f32>, down: vec4<f32>, side: vec4<f32>, n: vec3<f32>) -> vec3<f32> {
    if (down.w > 0.5) {
        return select(mix(side.rgb, down.rgb, -n.z), mix(side.rgb, up.rgb, n.z), n.z >= 0.0);
    }
    return hemisphere_ambient(n);
}

const REP_COLORS = array<vec3<f32>, 4>(vec3<f32>(0.95, 0.12, 0.10), vec3<f32>(0.95, 0.80, 0.10), vec3<f32>(0.15, 0.85, 0.20), vec3<f32>(0.15, 0.30, 0.95));

// `irr`: the ambient light (baked irradiance × AO). `leaf`: light through the leaf from behind
// adds a little (translucency).
fn shade(t: Tree, world: vec3<f32>, n: vec3<f32>, albedo: vec3<f32>, irr: vec3<f32>, ao: f32, leaf: bool) -> vec3<f32> {
    let ndl = dot(n, frame.sun_dir.xyz);
    let vis = sun_visibility(world, n * sign(ndl + 1e-4), 0.001);
    var direct = max(ndl, 0.0);
    if (leaf) {
        direct += 0.3 * max(-ndl, 0.0);
    }
    if (MODE == 1u) {
        let c = REP_COLORS[min(t.seed_rep.y & 255u, 3u)];
        return c * (0.55 + 0.45 * max(ndl, 0.0));
    } else if (MODE == 2u) {
        return vec3<f32>(ao);
    } else if (MODE == 3u) {
        return n * 0.5 + 0.5;
    } else if (MODE == 4u) {
        return select(vec3<f32>(0.5), tonemap(irr), t.baked);
    }
    let c = albedo * t.tint * (frame.sun_color.rgb * direct * vis + irr);
    return tonemap(fog_over(c, world));
}

fn scene_out(c: vec3<f32>, t: Tree) -> SceneOut {
    var o: SceneOut;
    o.color = vec4<f32>(c, 1.0);
    o.id = t.id;
    return o;
}

@fragment
fn fs_bark(v: MeshVary) -> SceneOut {
    let albedo = textureSample(tex_a, repeat_sampler, v.uv).rgb;
    let t = mesh_tree(v);
    if (!dither_keep(v.clip.xy, t)) {
        discard;
    }
    return scene_out(shade(t, v.world, normalize(v.normal), albedo, v.ambient, v.ao, false), t);
}

@fragment
fn fs_leaf(v: MeshVary) -> SceneOut {
    let texel = textureSample(tex_b, repeat_sampler, v.uv);
    let t = mesh_tree(v);
    if (texel.a < 0.5 || !dither_keep(v.clip.xy, t)) {
        discard;
    }
    // Two-sided: the normal turned to face the eye.
    var n = normalize(v.normal);
    if (dot(n, frame.camera_pos.xyz - v.world) < 0.0) {
        n = -n;
    }
    return scene_out(shade(t, v.world, n, texel.rgb, v.ambient, v.ao, true), t);
}

// ---- octahedral maps (mirror of bake/src/impostor/octahedral.rs) ---------------------------------

fn sign_nz(x: f32) -> f32 {
    return select(-1.0, 1.0, x >= 0.0);
}

fn oct_encode(d: vec3<f32>) -> vec2<f32> {
    let l1 = abs(d.x) + abs(d.y) + abs(d.z);
    var a = d.x / l1;
    var b = d.y / l1;
    if (d.z < 0.0) {
        let fa = (1.0 - abs(b)) * sign_nz(a);
        let fb = (1.0 - abs(a)) * sign_nz(b);
        a = fa;
        b = fb;
    }
    return vec2<f32>(a * 0.5 + 0.5, b * 0.5 + 0.5);
}

fn oct_decode(uv: vec2<f32>) -> vec3<f32> {
    var a = uv.x * 2.0 - 1.0;
    var b = uv.y * 2.0 - 1.0;
    let z = 1.0 - abs(a) - abs(b);
    if (z < 0.0) {
        let fa = (1.0 - abs(b)) * sign_nz(a);
        let fb = (1.0 - abs(a)) * sign_nz(b);
        a = fa;
        b = fb;
    }
    return normalize(vec3<f32>(a, b, z));
}

fn hemi_encode(d: vec3<f32>) -> vec2<f32> {
    let z = max(d.z, 0.0);
    let l1 = abs(d.x) + abs(d.y) + z;
    let x = d.x / l1;
    let y = d.y / l1;
    return vec2<f32>((x + y) * 0.5 + 0.5, (x - y) * 0.5 + 0.5);
}

fn hemi_decode(uv: vec2<f32>) -> vec3<f32> {
    let a = uv.x * 2.0 - 1.0;
    let b = uv.y * 2.0 - 1.0;
    let x = (a + b) * 0.5;
    let y = (a - b) * 0.5;
    return normalize(vec3<f32>(x, y, 1.0 - abs(x) - abs(y)));
}

fn frame_direction(cell: vec2<u32>) -> vec3<f32> {
    let n = f32(atlas.params.x - 1u);
    let uv = vec2<f32>(cell) / n;
    if (atlas.params.z == 1u) {
        return hemi_decode(uv);
    }
    return oct_decode(uv);
}

struct Basis {
    right: vec3<f32>,
    up: vec3<f32>,
}

fn frame_basis(d: vec3<f32>) -> Basis {
    let h = d.x * d.x + d.y * d.y;
    var right = vec3<f32>(1.0, 0.0, 0.0);
    if (h > 1e-12) {
        let l = sqrt(h);
        right = vec3<f32>(-d.y / l, d.x / l, 0.0);
    }
    return Basis(right, cross(d, right));
}

struct Blend {
    f0: vec2<u32>,
    f1: vec2<u32>,
    f2: vec2<u32>,
    w: vec3<f32>,
}

fn select_frames(d: vec3<f32>) -> Blend {
    let n = f32(atlas.params.x - 1u);
    var uv: vec2<f32>;
    if (atlas.params.z == 1u) {
        uv = hemi_encode(d);
    } else {
        uv = oct_encode(d);
    }
    let g = clamp(uv * n, vec2<f32>(0.0), vec2<f32>(n));
    let cell = min(floor(g), vec2<f32>(n - 1.0));
    let fx = g.x - cell.x;
    let fy = g.y - cell.y;
    let c = vec2<u32>(cell);
    let second = select(vec2<u32>(c.x, c.y + 1u), vec2<u32>(c.x + 1u, c.y), fx > fy);
    return Blend(c, second, c + vec2<u32>(1u), vec3<f32>(min(1.0 - fx, 1.0 - fy), abs(fx - fy), min(fx, fy)));
}

// ---- impostors ------------------------------------------------------------------------------------

struct ImpVary {
    @builtin(position) clip: vec4<f32>,
    @location(0) obj: vec3<f32>,                                // quad point, object space, sphere radii from the centre
    @location(1) @interpolate(flat) ray: vec3<f32>,             // orthographic ray (shadow) or unused
    @location(2) @interpolate(flat) view: vec3<f32>,            // centre toward the viewer, object space
    @location(3) @interpolate(flat) eye: vec3<f32>,             // the camera in the same units (perspective)
    @location(4) @interpolate(flat) pos_yaw: vec4<f32>,
    @location(5) @interpolate(flat) scale: f32,
    @location(6) @interpolate(flat) tint: vec3<f32>,
    @location(7) @interpolate(flat) up: vec4<f32>,
    @location(8) @interpolate(flat) down: vec4<f32>,
    @location(9) @interpolate(flat) side: vec4<f32>,
    @location(10) @interpolate(flat) id: u32,
    @location(11) @interpolate(flat) seed_rep: vec2<u32>,
}

const CORNERS = array<vec2<f32>, 6>(vec2<f32>(-1.0, -1.0), vec2<f32>(1.0, -1.0), vec2<f32>(1.0, 1.0), vec2<f32>(-1.0, -1.0), vec2<f32>(1.0, 1.0), vec2<f32>(-1.0, 1.0));

// World → the atlas's frame: object space relative to the sphere centre, in radii.
fn to_atlas(i: Instance, world: vec3<f32>) -> vec3<f32> {
    let o = rotate_z(world - i.pos_yaw.xyz, -i.pos_yaw.w) / i.scale_tint.x;
    return (o - atlas.center.xyz) / atlas.center.w;
}

fn from_atlas(v: ImpVary, p: vec3<f32>) -> vec3<f32> {
    return v.pos_yaw.xyz + rotate_z((atlas.center.xyz + p * atlas.center.w) * v.scale, v.pos_yaw.w);
}

// A quad facing `e` (unit, centre toward the viewer) spanning `half` around the sphere centre.
fn impostor_quad(i: Instance, vi: u32, e: vec3<f32>, half: f32) -> vec3<f32> {
    let centre = i.pos_yaw.xyz + rotate_z(atlas.center.xyz * i.scale_tint.x, i.pos_yaw.w);
    var right = vec3<f32>(1.0, 0.0, 0.0);
    if (abs(e.z) < 0.999) {
        right = normalize(cross(vec3<f32>(0.0, 0.0, 1.0), e));
    }
    let up = cross(e, right);
    let k = CORNERS[vi];
    return centre + (right * k.x + up * k.y) * half;
}

@vertex
fn vs_impostor(@builtin(vertex_index) vi: u32, i: Instance) -> ImpVary {
    let r = atlas.center.w * i.scale_tint.x;
    let centre = i.pos_yaw.xyz + rotate_z(atlas.center.xyz * i.scale_tint.x, i.pos_yaw.w);
    let to_eye = frame.camera_pos.xyz - centre;
    let d = max(length(to_eye), 1e-3);
    let e = to_eye / d;
    // The sphere's silhouette seen from distance d is wider than r at the centre plane.
    let half = r * min(d / sqrt(max(d * d - r * r, 1e-6)), 4.0);
    let world = impostor_quad(i, vi, e, half);
    var o: ImpVary;
    o.clip = frame.view_proj * vec4<f32>(world, 1.0);
    o.obj = to_atlas(i, world);
    o.view = rotate_z(e, -i.pos_yaw.w);
    o.eye = to_atlas(i, frame.camera_pos.xyz);
    o.ray = -o.view;
    o.pos_yaw = i.pos_yaw;
    o.scale = i.scale_tint.x;
    o.tint = i.scale_tint.yzw;
    o.up = i.light_up;
    o.down = i.light_down;
    o.side = i.light_side;
    o.id = i.id;
    o.seed_rep = i.seed_rep;
    return o;
}

@vertex
fn vs_impostor_shadow(@builtin(vertex_index) vi: u32, i: Instance) -> ImpVary {
    let r = atlas.center.w * i.scale_tint.x;
    let e = frame.sun_dir.xyz;
    let world = impostor_quad(i, vi, e, r);
    var o: ImpVary;
    o.clip = frame.light_view_proj * vec4<f32>(world, 1.0);
    o.obj = to_atlas(i, world);
    o.view = rotate_z(e, -i.pos_yaw.w);
    o.eye = vec3<f32>(0.0);
    o.ray = -o.view;
    o.pos_yaw = i.pos_yaw;
    o.scale = i.scale_tint.x;
    o.tint = i.scale_tint.yzw;
    o.up = i.light_up;
    o.down = i.light_down;
    o.side = i.light_side;
    o.id = i.id;
    o.seed_rep = i.seed_rep;
    // The mip from the tree's size in shadow texels.
    let px = 2.0 * r / max(frame.sun_dir.w, 1e-6);
    o.side.w = clamp(log2(f32(atlas.params.y) / px), 0.0, f32(atlas.params.w - 1u));
    return o;
}

struct Hit {
    albedo: vec4<f32>,   // rgb colour, a coverage
    normal: vec4<f32>,   // xyz object normal (unnormalised), w AO
    pos: vec3<f32>,      // surface point, atlas units
}

// ---- reconstruction (mirror of bake/src/impostor/march.rs, March::VIEWER) -------------------------

const MARCH_STEPS: u32 = 12u;
const REFINE_STEPS: u32 = 4u;
const MIN_COVERAGE: f32 = 0.01;

// View-local uv of p in a frame (row 0 at the top).
fn view_uv(b: Basis, p: vec3<f32>) -> vec2<f32> {
    return vec2<f32>(0.5 + 0.5 * dot(p, b.right), 0.5 - 0.5 * dot(p, b.up));
}

// A view-local uv to the atlas, clamped to the view's texel centres at this mip (never reading
// the neighbouring view).
fn atlas_uv(cell: vec2<u32>, f: vec2<f32>, lod: f32) -> vec2<f32> {
    let px = f32(max(atlas.params.y >> u32(lod), 1u));
    return (vec2<f32>(cell) + clamp(f, vec2<f32>(0.5 / px), vec2<f32>(1.0 - 0.5 / px))) / f32(atlas.params.x);
}

// The ray o + s·d (d unit) inside the unit sphere: (s0, s1, 1), or z = 0 when it misses.
fn sphere_span(o: vec3<f32>, d: vec3<f32>) -> vec3<f32> {
    let b = dot(o, d);
    let c = dot(o, o) - 1.0;
    let disc = b * b - c;
    if (disc <= 0.0) {
        return vec3<f32>(0.0);
    }
    let root = sqrt(disc);
    let s1 = -b + root;
    if (s1 <= 0.0) {
        return vec3<f32>(0.0);
    }
    return vec3<f32>(max(-b - root, 0.0), s1, 1.0);
}

// Behind frame `dk`'s surface: height along dk at most the depth stored there (positive toward
// the frame's viewer), where the coverage is at least MIN_COVERAGE.
fn behind(cell: vec2<u32>, b: Basis, dk: vec3<f32>, p: vec3<f32>, lod: f32) -> bool {
    let uv = atlas_uv(cell, view_uv(b, p), lod);
    let a = textureSampleLevel(tex_a, clamp_sampler, uv, lod).a;
    let z = textureSampleLevel(tex_depth, clamp_sampler, uv, lod).r * 2.0 - 1.0;
    return dot(p, dk) <= z && a >= MIN_COVERAGE;
}

// The first surface of one frame's depth field along the ray o + s·d, s in `span`: a march of
// MARCH_STEPS equal steps, then REFINE_STEPS of bisection; coverage 0 where there is none.
fn frame_hit(cell: vec2<u32>, o: vec3<f32>, d: vec3<f32>, span: vec2<f32>, lod: f32) -> Hit {
    let dk = frame_direction(cell);
    let b = frame_basis(dk);
    let step = (span.y - span.x) / f32(MARCH_STEPS);
    var lo = span.x;
    var hi = -1.0;
    if (behind(cell, b, dk, o + d * lo, lod)) {
        hi = lo;
    } else {
        for (var k = 1u; k <= MARCH_STEPS; k++) {
            let s = span.x + step * f32(k);
            if (behind(cell, b, dk, o + d * s, lod)) {
                hi = s;
                break;
            }
            lo = s;
        }
    }
    var h: Hit;
    if (hi < 0.0) {
        h.albedo = vec4<f32>(0.0);
        h.normal = vec4<f32>(0.0);
        h.pos = o + d * span.y;
        return h;
    }
    if (hi > lo) {
        for (var k = 0u; k < REFINE_STEPS; k++) {
            let mid = 0.5 * (lo + hi);
            if (behind(cell, b, dk, o + d * mid, lod)) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
    }
    let p = o + d * hi;
    let uv = atlas_uv(cell, view_uv(b, p), lod);
    h.albedo = textureSampleLevel(tex_a, clamp_sampler, uv, lod);
    let nt = textureSampleLevel(tex_b, clamp_sampler, uv, lod);
    h.normal = vec4<f32>(nt.xyz * 2.0 - 1.0, nt.a);
    h.pos = p;
    return h;
}

// The three frames' surfaces for the ray o + s·d (atlas units), blended by weight × coverage;
// coverage Σ wₖ·αₖ.
fn impostor_hit(v: ImpVary, o: vec3<f32>, d: vec3<f32>) -> Hit {
    var h: Hit;
    let span = sphere_span(o, d);
    if (span.z == 0.0) {
        h.albedo = vec4<f32>(0.0);
        return h;
    }
    let blend = select_frames(v.view);
    let lod = v.side.w;
    let h0 = frame_hit(blend.f0, o, d, span.xy, lod);
    let h1 = frame_hit(blend.f1, o, d, span.xy, lod);
    let h2 = frame_hit(blend.f2, o, d, span.xy, lod);
    let wa = blend.w * vec3<f32>(h0.albedo.a, h1.albedo.a, h2.albedo.a);
    let sum = wa.x + wa.y + wa.z;
    let inv = 1.0 / max(sum, 1e-6);
    h.albedo = vec4<f32>((h0.albedo.rgb * wa.x + h1.albedo.rgb * wa.y + h2.albedo.rgb * wa.z) * inv, sum);
    h.normal = (h0.normal * wa.x + h1.normal * wa.y + h2.normal * wa.z) * inv;
    h.pos = (h0.pos * wa.x + h1.pos * wa.y + h2.pos * wa.z) * inv;
    return h;
}

struct ImpOut {
    @location(0) color: vec4<f32>,
    @location(1) id: u32,
    @builtin(frag_depth) depth: f32,
}

@fragment
fn fs_impostor(v: ImpVary) -> ImpOut {
    let h = impostor_hit(v, v.eye, normalize(v.obj - v.eye));
    let t = imp_tree(v);
    if (h.albedo.a < 0.5 || !dither_keep(v.clip.xy, t)) {
        discard;
    }
    let world = from_atlas(v, h.pos);
    var n = rotate_z(normalize(h.normal.xyz + vec3<f32>(0.0, 0.0, 1e-5)), v.pos_yaw.w);
    // The captured normals face the capture camera; keep them facing this one.
    if (dot(n, frame.camera_pos.xyz - world) < 0.0) {
        n = -n;
    }
    var o: ImpOut;
    let irr = ambient(v.up, v.down, v.side, n) * h.normal.w;
    o.color = vec4<f32>(shade(t, world, n, h.albedo.rgb, irr, h.normal.w, true), 1.0);
    o.id = t.id;
    let clip = frame.view_proj * vec4<f32>(world, 1.0);
    o.depth = clip.z / clip.w;
    return o;
}

@fragment
fn fs_impostor_shadow(v: ImpVary) -> @builtin(frag_depth) f32 {
    // Orthographic: from two radii in front of the quad's point, outside the sphere.
    let h = impostor_hit(v, v.obj - v.ray * 2.0, v.ray);
    if (h.albedo.a < 0.5) {
        discard;
    }
    let clip = frame.light_view_proj * vec4<f32>(from_atlas(v, h.pos), 1.0);
    return clip.z / clip.w;
}
