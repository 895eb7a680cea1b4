// Shared by the grass's selection (grass_select.wgsl) and drawing (grass.wgsl): the blade and
// flower layouts (layers::grass::assets), the per-frame tables (layers::grass::gpu) and the hash
// of layers::grass::select, bit for bit.

struct Blade {
    base: vec4<f32>,     // x, y (patch-local), length, width
    dir: vec4<f32>,      // unit direction, bend
    normal: vec3<f32>,
    parent: u32,         // absolute index in the next level; 0xffffffff in the last
    color: vec4<f32>,    // linear rgb, w index within its level
}

struct Flower {
    base: vec4<f32>,     // x, y, stem height, head radius
    color: vec4<f32>,
}

struct TileInfo {
    origin: vec2<f32>,
    spacing: f32,
    size: u32,
    base: u32,           // first word of its samples (3 words a sample: height bits, keep, light)
    pick: u32,
}

// One drawn blade or flower.
struct Entry {
    pos: vec3<f32>,      // world base (morphed toward the parent)
    item: u32,           // absolute blade or flower index
    light_rg: u32,       // pack2x16float of the ground irradiance
    light_b_morph: u32,  // pack2x16float(b, morph)
    misc: u32,           // rotation (2 bits) | level << 2 (5 bits) | f16 height scale << 16
    tile: u32,
}

struct Params {
    eye: vec4<f32>,
    planes: array<vec4<f32>, 6>,
    switches: array<vec4<f32>, 4>,   // d_1 … d_15 at [k-1]
    distance: f32,
    stagger: f32,
    force: i32,                      // -1: by distance
    levels: u32,
    patch_size: f32,
    time: f32,
    mode: u32,
    pad: u32,
    tint: vec4<f32>,
    segments: array<vec4<u32>, 4>,
}

const NO_PARENT: u32 = 0xffffffffu;
const SALT_THRESHOLD: u32 = 0x68bc21ebu;
const SALT_CUTOFF: u32 = 0x02e5be93u;
const FLOWER_KEY: u32 = 0x40000000u;
const MORPH_BAND: f32 = 0.15;
const CUT_STAGGER: f32 = 0.1;
// Height difference between neighbouring ground samples, in sample spacings, taken as a cliff:
// no blade stands between them and no tint spans them (layers::grass::select::CLIFF).
const CLIFF: f32 = 4.0;

fn fmix(x: u32) -> u32 {
    var h = x;
    h ^= h >> 16u;
    h *= 0x85ebca6bu;
    h ^= h >> 13u;
    h *= 0xc2b2ae35u;
    return h ^ (h >> 16u);
}

fn hash3(a: u32, b: u32, c: u32) -> u32 {
    return fmix(fmix(fmix(a ^ 0x9e3779b9u) ^ (b * 0x27d4eb2fu)) ^ (c * 0x165667b1u));
}

fn unit(h: u32) -> f32 {
    return f32(h >> 8u) / 16777216.0;
}

fn switch_at(k: u32) -> f32 {
    let i = k - 1u;
    return params.switches[i / 4u][i % 4u];
}

fn segments_at(k: u32) -> u32 {
    return params.segments[k / 4u][k % 4u];
}

fn rgb9e5(v: u32) -> vec3<f32> {
    let scale = exp2(f32(i32(v >> 27u) - 24));
    return vec3<f32>(f32(v & 511u), f32((v >> 9u) & 511u), f32((v >> 18u) & 511u)) * scale;
}

// Patch-local xy → world xy, quarter turns about the patch centre.
fn rotate(v: vec2<f32>, r: u32) -> vec2<f32> {
    switch r & 3u {
        case 1u: { return vec2<f32>(-v.y, v.x); }
        case 2u: { return -v; }
        case 3u: { return vec2<f32>(v.y, -v.x); }
        default: { return v; }
    }
}
