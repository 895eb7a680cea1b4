// Terrain pass: baked AO (and irradiance when present), sun with a PCF shadow map, triplanar
// noise-textured materials by slope and height, distance fog, and the inspection view modes.

// The view mode (`ViewMode::shader_index`), fixed per pipeline: each mode gets a pipeline compiled
// with only its own code. A run-time switch made even the cheap modes pay for the lit path's
// registers on some drivers (5× slower on lavapipe).
override MODE: u32 = 0u;

struct Tile {
    id: u32,
    level: u32,
    flags: u32,              // bit 0: under the cursor
    pad: u32,
    color: vec4<f32>,        // LOD colour
}

@group(1) @binding(0) var<uniform> tile: Tile;
@group(2) @binding(0) var shadow_map: texture_depth_2d;
@group(2) @binding(1) var shadow_sampler: sampler_comparison;
@group(2) @binding(2) var noise_tex: texture_2d<f32>;
@group(2) @binding(3) var noise_sampler: sampler;

struct VertexIn {
    @location(0) position: vec3<f32>,
    @location(1) normal: vec4<f32>,
    @location(2) ao: vec4<f32>,
    @location(3) irradiance: vec4<f32>,   // rgb; w = 1 when baked, 0 when absent
}

struct TerrainVary {
    @builtin(position) clip: vec4<f32>,
    @location(0) world: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) ao: f32,
    @location(3) irradiance: vec4<f32>,
    // The ambient light (baked irradiance or the hemisphere's, × AO): it varies smoothly, so the
    // vertices compute it and the lit fragments read these three values instead of five.
    @location(4) ambient: vec3<f32>,
}

fn transform(v: VertexIn) -> TerrainVary {
    var o: TerrainVary;
    o.clip = frame.view_proj * vec4<f32>(v.position, 1.0);
    o.world = v.position;
    o.normal = v.normal.xyz;
    o.ao = v.ao.x;
    o.irradiance = v.irradiance;
    if (v.irradiance.w > 0.5) {
        o.ambient = v.irradiance.rgb * v.ao.x;
    } else {
        o.ambient = hemisphere_ambient(normalize(v.normal.xyz)) * v.ao.x;
    }
    return o;
}

@vertex
fn vs_terrain(v: VertexIn) -> TerrainVary {
    return transform(v);
}

// Wireframe overlay vertices: pulled toward the camera by 0.1% of their distance (reverse-Z: a
// larger depth is nearer) so edges win the depth test against their own filled triangles. Done
// here, not with depth bias, because wgpu allows depth bias only for triangle topologies.
@vertex
fn vs_wire(v: VertexIn) -> TerrainVary {
    var o = transform(v);
    o.clip.z *= 1.001;
    return o;
}

// ---- material noise ---------------------------------------------------------------------------

// A tileable fractal value-noise texture made on the CPU at start-up (`passes::noise`): r = coarse
// (4 octaves), g = fine (2 octaves of an independent lattice at 8× the frequency). One filtered
// read per projection plane replaces dozens of hash lookups of procedural fBm; the mipmaps fade
// octaves finer than a pixel to their mean.
const NOISE_CELLS: f32 = 16.0;   // first-octave lattice cells across the texture (noise::CELLS)

// Coarse and fine noise at `p`, in first-octave lattice units. Implicit derivatives (so only from
// uniform control flow): the hardware's own footprint, and on lavapipe one mip selection per 2×2
// quad instead of a per-pixel explicit-LOD path.
fn plane_noise(p: vec2<f32>) -> vec2<f32> {
    return textureSample(noise_tex, noise_sampler, p * (1.0 / NOISE_CELLS)).rg;
}

// Noise projected along the three axes and blended by the normal: no stretching on cliffs. All
// three planes are read: skipping a plane by its weight would be a non-uniform branch around
// implicit-derivative sampling.
fn triplanar(pos: vec3<f32>, n: vec3<f32>) -> vec2<f32> {
    var w = pow(abs(n), vec3<f32>(4.0));
    w /= (w.x + w.y + w.z);
    return w.x * plane_noise(pos.yz) + w.y * plane_noise(pos.xz) + w.z * plane_noise(pos.xy);
}

// ---- materials and lighting -------------------------------------------------------------------

// Rock on steep slopes, grass on flat ground, snow on flat ground above the snow line; the
// boundaries are broken up by the same noise so they do not follow contour lines exactly.
fn albedo(world: vec3<f32>, n: vec3<f32>) -> vec3<f32> {
    let s = frame.world.z;
    let noise = triplanar(world * s, n);
    let coarse = noise.x;
    let fine = noise.y;
    let height = clamp((world.z - frame.world.x) / max(frame.world.y - frame.world.x, 1e-3), 0.0, 1.0);

    let strata = 0.5 + 0.5 * sin(world.z * s * 9.0 + coarse * 6.0);
    let rock = mix(vec3<f32>(0.20, 0.18, 0.16), vec3<f32>(0.45, 0.41, 0.36), 0.55 * fine + 0.25 * strata + 0.2 * coarse);
    let grass = mix(vec3<f32>(0.10, 0.20, 0.05), vec3<f32>(0.30, 0.34, 0.10), coarse) * (0.8 + 0.4 * fine);
    let snow = vec3<f32>(0.86, 0.89, 0.95) * (0.92 + 0.08 * fine);

    let flat_ground = smoothstep(0.62, 0.80, n.z + (coarse - 0.5) * 0.15);
    let snowy = smoothstep(-0.04, 0.04, height - frame.world.w + (coarse - 0.5) * 0.2) * smoothstep(0.5, 0.75, n.z);
    return mix(mix(rock, grass, flat_ground), snow, snowy);
}

fn lit_color(v: TerrainVary, n: vec3<f32>) -> vec3<f32> {
    let base = albedo(v.world, n);
    let sun = frame.sun_color.rgb * max(dot(n, frame.sun_dir.xyz), 0.0) * sun_visibility(v.world, n, 0.0005) * sun_water(v.world);
    var c = base * (sun + v.ambient);
    if ((tile.flags & 1u) != 0u) {
        c = mix(c, vec3<f32>(1.0, 0.85, 0.3), 0.18);
    }
    return tonemap(fog_over(c, v.world));
}

@fragment
fn fs_terrain(v: TerrainVary) -> SceneOut {
    // Back faces are culled (the pack stores skirts with both windings): only the side the normal belongs to
    // is ever shaded here.
    let n = normalize(v.normal);
    var c: vec3<f32>;
    if (MODE == 1u) {
        c = vec3<f32>(v.ao);
    } else if (MODE == 2u) {
        c = select(vec3<f32>(0.5), tonemap(v.irradiance.rgb), v.irradiance.w > 0.5);
    } else if (MODE == 3u) {
        c = n * 0.5 + 0.5;
    } else if (MODE == 4u) {
        c = tile.color.rgb * (0.45 + 0.55 * max(dot(n, frame.sun_dir.xyz), 0.0));
    } else if (MODE == 5u) {
        c = lit_color(v, n) * 0.35;
    } else {
        c = lit_color(v, n);
    }
    var o: SceneOut;
    o.color = vec4<f32>(c, 1.0);
    o.id = tile.id;
    return o;
}

// Wireframe overlay: triangle edges in the tile's LOD colour (picked tile in white).
@fragment
fn fs_wire(v: TerrainVary) -> SceneOut {
    var o: SceneOut;
    o.color = select(vec4<f32>(tile.color.rgb, 1.0), vec4<f32>(1.0), (tile.flags & 1u) != 0u);
    o.id = tile.id;
    return o;
}
