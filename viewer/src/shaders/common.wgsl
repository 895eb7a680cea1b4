// Shared by every 3D pass: the per-frame uniforms (mirrors renderer::uniforms::FrameUniforms),
// the sky model (the fog colour must equal the sky at the horizon for terrain to melt into it),
// and tone mapping.

struct Frame {
    view_proj: mat4x4<f32>,
    inv_view_proj: mat4x4<f32>,
    light_view_proj: mat4x4<f32>,
    camera_pos: vec4<f32>,
    sun_dir: vec4<f32>,      // xyz toward the sun; w world size of a shadow texel
    sun_color: vec4<f32>,    // rgb radiance; w exposure
    sky_zenith: vec4<f32>,
    sky_horizon: vec4<f32>,
    ground: vec4<f32>,       // rgb ground bounce; w ambient strength
    fog: vec4<f32>,          // x density, w max opacity
    world: vec4<f32>,        // x min z, y max z, z material noise scale, w snow line
    viewport: vec4<f32>,     // w, h, 1/w, 1/h
    params: vec4<u32>,       // x unused, y shadow map size, z flags (bit 0 shadows), w water (bit 0 present, bit 1 camera under)
    water: vec4<f32>,        // x level, y flat-surface transmittance of the sun, z cos of the refracted sun, w ior
    water_absorption: vec4<f32>, // rgb Beer–Lambert absorption per world unit
}

@group(0) @binding(0) var<uniform> frame: Frame;

// Radiance of the sky in direction `dir` (unit): a zenith-to-horizon gradient, a darker band below
// the horizon, and the sun's glow and disk.
fn sky_radiance(dir: vec3<f32>) -> vec3<f32> {
    var c: vec3<f32>;
    if (dir.z >= 0.0) {
        c = mix(frame.sky_horizon.rgb, frame.sky_zenith.rgb, sqrt(dir.z));
    } else {
        c = mix(frame.sky_horizon.rgb, frame.ground.rgb * 0.5, clamp(-dir.z * 3.0, 0.0, 1.0));
    }
    let s = max(dot(dir, frame.sun_dir.xyz), 0.0);
    c += frame.sun_color.rgb * (0.06 * pow(s, 12.0) + 8.0 * smoothstep(0.99965, 0.9999, s));
    return c;
}

// ACES filmic fit (Narkowicz 2015): keeps the sun-lit snow from clipping to flat white.
fn tonemap(c: vec3<f32>) -> vec3<f32> {
    let x = c * frame.sun_color.w;
    return clamp((x * (2.51 * x + 0.03)) / (x * (2.43 * x + 0.59) + 0.14), vec3<f32>(0.0), vec3<f32>(1.0));
}

// Colour attachments of the main pass: scene colour and the tile id (0 = sky).
struct SceneOut {
    @location(0) color: vec4<f32>,
    @location(1) id: u32,
}
