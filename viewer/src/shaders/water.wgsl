// Water (`layers/water`): the animated surface of each tile's water grid, caustics on the terrain
// under it, underwater fog, and the `caustics` and `water-mask` view modes. Compiled after
// common.wgsl and sunlight.wgsl.
//
// The surface reads the scene as the opaque phases and the sky left it (colour and depth, copied
// by the layer between the halves of the main pass): refraction samples that copy displaced by the
// normal, and the depth gives the water's path to the terrain behind (Beer–Lambert absorption) and
// the terrain point the caustics fall on. The copy holds tone-mapped colour: it is turned back into
// radiance (the ACES fit inverted, as `renderer::meter::aces_inverse`) before light is added or
// absorbed, and tone-mapped again at the end.

// 0 lit surface, 1 caustics alone, 2 water mask.
override MODE: u32 = 0u;

struct Tile {
    id: u32,
    level: u32,
    flags: u32,
    pad: u32,
    color: vec4<f32>,
}

struct Water {
    waves: vec4<f32>,            // x 1/patch size, y frame position in [0, F), z frames F, w caustic planes D
    caustic: vec4<f32>,          // xy caustic map shift per unit depth (baked sun → this sun), z flat transmittance, w 1 when the scene colour was copied
    depths: array<vec4<f32>, 2>, // the caustic planes' depths below the surface
    scale: vec4<f32>,            // x shore foam band, y depth over which the waves calm, z the mask's depth scale (world units)
    copy_rect: vec4<f32>,        // the pixels the scene colour copy holds: x0, y0, x1, y1 (exclusive)
}

@group(1) @binding(0) var<uniform> tile: Tile;
@group(2) @binding(0) var shadow_map: texture_depth_2d;
@group(2) @binding(1) var shadow_sampler: sampler_comparison;
@group(2) @binding(2) var noise_tex: texture_2d<f32>;
@group(2) @binding(3) var noise_sampler: sampler;
@group(3) @binding(0) var<uniform> water: Water;
@group(3) @binding(1) var surface_tex: texture_2d_array<f32>;
@group(3) @binding(2) var normal_tex: texture_2d_array<f32>;
@group(3) @binding(3) var caustic_tex: texture_2d_array<f32>;
@group(3) @binding(4) var wave_sampler: sampler;
@group(3) @binding(5) var scene_color: texture_2d<f32>;
@group(3) @binding(6) var scene_depth: texture_depth_2d;

// Terrain albedo assumed where caustic light is added to what the scene copy shows (the copy holds
// light × albedo, not the albedo itself); about the terrain materials' mean.
const CAUSTIC_ALBEDO: f32 = 0.35;

// ---- waves ------------------------------------------------------------------------------------

// The two frames around the clock and the blend between them (the loop wraps F − 1 → 0).
fn frames() -> vec3<f32> {
    let f = water.waves.y;
    let f0 = floor(f);
    var f1 = f0 + 1.0;
    if (f1 >= water.waves.z) {
        f1 = 0.0;
    }
    return vec3<f32>(f0, f1, f - f0);
}

// Displacement (dx, dy, dz) and Jacobian of the surface point whose rest position has patch
// coordinates `uv` (world xy / patch size: the maps repeat).
fn surface_at(uv: vec2<f32>) -> vec4<f32> {
    let fr = frames();
    let a = textureSampleLevel(surface_tex, wave_sampler, uv, i32(fr.x), 0.0);
    let b = textureSampleLevel(surface_tex, wave_sampler, uv, i32(fr.y), 0.0);
    return mix(a, b, fr.z);
}

fn normal_at(uv: vec2<f32>) -> vec3<f32> {
    let fr = frames();
    let a = textureSampleLevel(normal_tex, wave_sampler, uv, i32(fr.x), 0.0).xy;
    let b = textureSampleLevel(normal_tex, wave_sampler, uv, i32(fr.y), 0.0).xy;
    let xy = mix(a, b, fr.z);
    return normalize(vec3<f32>(xy, sqrt(max(1.0 - dot(xy, xy), 0.0))));
}

fn plane_depth(k: u32) -> f32 {
    return water.depths[k / 4u][k % 4u];
}

fn caustic_plane(uv: vec2<f32>, k: u32, fr: vec3<f32>) -> f32 {
    let d = u32(water.waves.w);
    let a = textureSampleLevel(caustic_tex, wave_sampler, uv, i32(u32(fr.x) * d + k), 0.0).r;
    let b = textureSampleLevel(caustic_tex, wave_sampler, uv, i32(u32(fr.y) * d + k), 0.0).r;
    return mix(a, b, fr.z);
}

// The sun's irradiance at world point `p`, `h` below the surface, relative to its irradiance above
// the water, before absorption: the caustic maps interpolated between the planes around `h`
// (from the flat surface's value at the surface itself), fading back to that value below the
// deepest plane, where the pattern has washed out. The maps are indexed by receiving point for the
// baked sun; this sun's light reaching `p` crossed the surface elsewhere, hence the shift.
fn caustic_at(p: vec3<f32>, h: f32) -> f32 {
    let uv = (p.xy + water.caustic.xy * h) * water.waves.x;
    let fr = frames();
    let still = water.caustic.z;
    var lo = 0.0;
    var lo_value = still;
    var c = still;
    var found = false;
    for (var k = 0u; k < u32(water.waves.w); k++) {
        let dk = plane_depth(k);
        let ck = caustic_plane(uv, k, fr);
        if (!found && h <= dk) {
            c = mix(lo_value, ck, clamp((h - lo) / max(dk - lo, 1e-4), 0.0, 1.0));
            found = true;
        }
        lo = dk;
        lo_value = ck;
    }
    if (!found) {
        c = mix(lo_value, still, smoothstep(lo, 2.0 * lo, h));
    }
    return c;
}

// The sun's direct light on terrain point `p` (normal `n`) below the water, with the shadow map
// and absorption along the refracted sun's path, per unit of the caustic ratio.
fn sun_under_water(p: vec3<f32>, n: vec3<f32>) -> vec3<f32> {
    let h = frame.water.x - p.z;
    let t = exp(-frame.water_absorption.rgb * h / max(frame.water.z, 0.05));
    return frame.sun_color.rgb * max(dot(n, frame.sun_dir.xyz), 0.0) * sun_visibility(p, n, 0.0005) * t;
}

// ---- the scene copy ---------------------------------------------------------------------------

fn aces_inverse(y: vec3<f32>) -> vec3<f32> {
    let v = clamp(y, vec3<f32>(0.0), vec3<f32>(0.995));
    let a = 2.43 * v - 2.51;
    let b = 0.59 * v - 0.03;
    let c = 0.14 * v;
    let disc = max(b * b - 4.0 * a * c, vec3<f32>(0.0));
    return max((-b - sqrt(disc)) / (2.0 * a), vec3<f32>(0.0));
}

// The radiance the copied pixel showed (undoing the tone curve and the exposure).
fn scene_radiance(px: vec2<i32>) -> vec3<f32> {
    return aces_inverse(textureLoad(scene_color, px, 0).rgb) / max(frame.sun_color.w, 1e-6);
}

// How far refraction displaces the scene, as a fraction of the frame's height
// (layers::water::layer::REFRACT_REACH: the layer copies that much around the water).
const REFRACT_REACH: f32 = 0.03;

fn clamp_copied(px: vec2<i32>) -> vec2<i32> {
    return clamp(px, vec2<i32>(water.copy_rect.xy), vec2<i32>(water.copy_rect.zw) - 1);
}

fn clamp_px(px: vec2<i32>) -> vec2<i32> {
    return clamp(px, vec2<i32>(0), vec2<i32>(frame.viewport.xy) - 1);
}

// World position of pixel `px` at reverse-Z depth `d` (> 0).
fn world_at(px: vec2<i32>, d: f32) -> vec3<f32> {
    let uv = (vec2<f32>(px) + 0.5) * frame.viewport.zw;
    let h = frame.inv_view_proj * vec4<f32>(uv.x * 2.0 - 1.0, 1.0 - uv.y * 2.0, d, 1.0);
    return h.xyz / h.w;
}

// The copied scene's point at `px` (w = 0 where the sky was drawn) and its normal from the
// neighbouring pixels' points, turned toward the camera.
fn scene_point(px: vec2<i32>) -> vec4<f32> {
    let d = textureLoad(scene_depth, px, 0);
    if (d <= 0.0) {
        return vec4<f32>(0.0);
    }
    return vec4<f32>(world_at(px, d), 1.0);
}

fn scene_normal(px: vec2<i32>, p: vec3<f32>) -> vec3<f32> {
    let qx = clamp_px(px + vec2<i32>(1, 0));
    let qy = clamp_px(px + vec2<i32>(0, 1));
    let dx = textureLoad(scene_depth, qx, 0);
    let dy = textureLoad(scene_depth, qy, 0);
    if (dx <= 0.0 || dy <= 0.0 || qx.x == px.x || qy.y == px.y) {
        return vec3<f32>(0.0, 0.0, 1.0);
    }
    var n = cross(world_at(qx, dx) - p, world_at(qy, dy) - p);
    if (dot(n, n) < 1e-20) {
        return vec3<f32>(0.0, 0.0, 1.0);
    }
    n = normalize(n);
    if (dot(n, frame.camera_pos.xyz - p) < 0.0) {
        n = -n;
    }
    return n;
}

// What the caustics change of the terrain point's light: its sun term under the water was drawn
// with the flat surface's transmittance (`sun_water`); the pattern redistributes it.
fn caustic_extra(p: vec3<f32>, n: vec3<f32>) -> vec3<f32> {
    let h = frame.water.x - p.z;
    if (h <= 0.0) {
        return vec3<f32>(0.0);
    }
    return CAUSTIC_ALBEDO * sun_under_water(p, n) * (caustic_at(p, h) - frame.water.y);
}

// The colour of deep water: sky and sun light scattered back by the water. Per colour the share
// scattered back before it is absorbed goes as 1/σ (scattering alike for every colour), so the
// tint is the least absorbed colour's σ over each colour's: independent of the world's units.
fn deep_water() -> vec3<f32> {
    let light = frame.sky_zenith.rgb * 0.6 + frame.sun_color.rgb * max(frame.sun_dir.z, 0.0) * 0.08;
    let sigma = max(frame.water_absorption.rgb, vec3<f32>(1e-6));
    return light * 0.25 * (min(sigma.x, min(sigma.y, sigma.z)) / sigma);
}

fn camera_under() -> bool {
    return (frame.params.w & 2u) != 0u;
}

// ---- the surface ------------------------------------------------------------------------------

struct VertexIn {
    @location(0) position: vec3<f32>,
    @location(1) depth_shore: vec2<f32>,
}

struct WaterVary {
    @builtin(position) clip: vec4<f32>,
    @location(0) world: vec3<f32>,
    @location(1) uv: vec2<f32>,
    @location(2) depth_shore: vec2<f32>,
    @location(3) jacobian: f32,
}

@vertex
fn vs_water(v: VertexIn) -> WaterVary {
    let uv = v.position.xy * water.waves.x;
    let s = surface_at(uv);
    // The waves calm over the last stretch of depth, so the surface meets the shore at its level.
    let calm = clamp(v.depth_shore.x / water.scale.y, 0.0, 1.0);
    var o: WaterVary;
    o.world = v.position + s.xyz * calm;
    o.clip = frame.view_proj * vec4<f32>(o.world, 1.0);
    o.uv = uv;
    o.depth_shore = v.depth_shore;
    o.jacobian = mix(1.0, s.w, calm);
    return o;
}

fn mask_color(depth: f32, shore: f32) -> vec3<f32> {
    let deep = 1.0 - exp(-depth / water.scale.z);
    var c = mix(vec3<f32>(0.45, 0.85, 1.0), vec3<f32>(0.02, 0.06, 0.45), deep);
    if (shore < water.scale.x) {
        c = mix(c, vec3<f32>(1.0, 0.85, 0.1), 0.8);
    }
    return c;
}

@fragment
fn fs_water(v: WaterVary) -> SceneOut {
    var o: SceneOut;
    o.id = tile.id;
    if (MODE == 2u) {
        o.color = vec4<f32>(mask_color(v.depth_shore.x, v.depth_shore.y), 1.0);
        return o;
    }
    let px = vec2<i32>(v.clip.xy);
    let cam = frame.camera_pos.xyz;
    let view = normalize(cam - v.world);
    let under = camera_under();
    // Near the shore the normals calm with the displacement.
    let calm = clamp(v.depth_shore.x / water.scale.y, 0.0, 1.0);
    var n = normalize(mix(vec3<f32>(0.0, 0.0, 1.0), normal_at(v.uv), calm));
    if (under) {
        n = -n;
    }
    let ior = frame.water.w;
    let f0 = pow((ior - 1.0) / (ior + 1.0), 2.0);
    var fresnel = f0 + (1.0 - f0) * pow(1.0 - clamp(dot(n, view), 0.0, 1.0), 5.0);
    let deep = deep_water();

    // Refraction: the copied scene behind the surface, displaced by the normal (less far away);
    // a displaced pixel in front of the surface is not under it, so the undisplaced one is used.
    let dist = length(cam - v.world);
    var q = clamp_copied(px + vec2<i32>(n.xy * frame.viewport.y * REFRACT_REACH / (1.0 + dist * 0.05)));
    if (textureLoad(scene_depth, q, 0) > v.clip.z) {
        q = px;
    }
    var refracted = deep;
    if (water.caustic.w > 0.5) {
        var light = scene_radiance(q);
        var path = 1e4;
        let p = scene_point(q);
        if (p.w > 0.0) {
            path = distance(p.xyz, v.world);
            if (!under && p.z < frame.water.x) {
                light = max(light + caustic_extra(p.xyz, scene_normal(q, p.xyz)), vec3<f32>(0.0));
            }
        }
        if (under) {
            // The fog pass absorbs along the camera's side of the surface.
            path = 0.0;
        }
        let t = exp(-frame.water_absorption.rgb * path);
        refracted = light * t + deep * (1.0 - t);
    }

    var reflected: vec3<f32>;
    var r = reflect(-view, n);
    if (!under) {
        r.z = abs(r.z);
        let glint = pow(max(dot(r, frame.sun_dir.xyz), 0.0), 600.0) * 80.0;
        reflected = sky_radiance(r) + frame.sun_color.rgb * glint * sun_visibility(v.world, vec3<f32>(0.0, 0.0, 1.0), 0.001);
    } else {
        // From below: the sky through Snell's window, total internal reflection outside it.
        reflected = deep;
        let t = refract(-view, n, ior);
        if (dot(t, t) == 0.0) {
            fresnel = 1.0;
        } else {
            refracted = sky_radiance(normalize(t));
        }
    }
    var c = mix(refracted, reflected, fresnel);

    // Foam: along the shore and where the surface folds (Jacobian below ~0.4), broken up by noise.
    let noise = textureSampleLevel(noise_tex, noise_sampler, v.world.xy * (0.3 / water.scale.x), 0.0).r;
    let foam = max(1.0 - smoothstep(0.15, 1.0, v.depth_shore.y / water.scale.x), 1.0 - smoothstep(0.1, 0.5, v.jacobian)) * smoothstep(0.35, 0.65, noise + 0.15);
    let lit = frame.sun_color.rgb * max(frame.sun_dir.z, 0.0) * sun_visibility(v.world, vec3<f32>(0.0, 0.0, 1.0), 0.001)
        + (frame.sky_zenith.rgb + frame.sky_horizon.rgb) * 0.5 * frame.ground.w;
    c = mix(c, lit * 0.8, foam * 0.85);
    if (!under) {
        c = fog_over(c, v.world);
    }
    o.color = vec4<f32>(tonemap(c), 1.0);
    return o;
}

// ---- full-screen passes -----------------------------------------------------------------------

struct FullVary {
    @builtin(position) clip: vec4<f32>,
}

@vertex
fn vs_full(@builtin(vertex_index) i: u32) -> FullVary {
    let uv = vec2<f32>(f32((i << 1u) & 2u), f32(i & 2u));
    var o: FullVary;
    o.clip = vec4<f32>(uv * 2.0 - 1.0, 0.0, 1.0);
    return o;
}

// The caustics view mode: the caustic light alone on the terrain under the water (black elsewhere).
@fragment
fn fs_caustics(v: FullVary) -> SceneOut {
    let px = vec2<i32>(v.clip.xy);
    var o: SceneOut;
    o.id = 0u;
    o.color = vec4<f32>(0.0, 0.0, 0.0, 1.0);
    let p = scene_point(px);
    let h = frame.water.x - p.z;
    if (p.w > 0.0 && h > 0.0) {
        let e = sun_under_water(p.xyz, scene_normal(px, p.xyz)) * caustic_at(p.xyz, h);
        o.color = vec4<f32>(tonemap(CAUSTIC_ALBEDO * e), 1.0);
    }
    return o;
}

// Underwater fog: the transmittance along the camera's ray up to the first thing it meets, the
// scene behind or the surface above (two draws: the scene × transmittance, then + the water's colour).
fn fog_transmittance(px: vec2<i32>) -> vec3<f32> {
    let cam = frame.camera_pos.xyz;
    let far = world_at(px, 0.5);
    let dir = normalize(far - cam);
    var dist = 1e4;
    let p = scene_point(px);
    if (p.w > 0.0) {
        dist = distance(p.xyz, cam);
    }
    if (dir.z > 1e-4) {
        dist = min(dist, (frame.water.x - cam.z) / dir.z);
    }
    return exp(-frame.water_absorption.rgb * max(dist, 0.0));
}

@fragment
fn fs_fog_absorb(v: FullVary) -> SceneOut {
    var o: SceneOut;
    o.id = 0u;
    o.color = vec4<f32>(fog_transmittance(vec2<i32>(v.clip.xy)), 1.0);
    return o;
}

@fragment
fn fs_fog_scatter(v: FullVary) -> SceneOut {
    var o: SceneOut;
    o.id = 0u;
    o.color = vec4<f32>(tonemap(deep_water()) * (1.0 - fog_transmittance(vec2<i32>(v.clip.xy))), 1.0);
    return o;
}
