// HUD: textured quads in pixel coordinates over the finished frame.

struct Screen {
    size: vec4<f32>, // w, h, 1/w, 1/h
}

@group(0) @binding(0) var<uniform> screen: Screen;
@group(0) @binding(1) var font: texture_2d<f32>;
@group(0) @binding(2) var font_sampler: sampler;

struct HudVary {
    @builtin(position) clip: vec4<f32>,
    @location(0) uv: vec2<f32>,
    @location(1) color: vec4<f32>,
}

@vertex
fn vs_hud(@location(0) px: vec2<f32>, @location(1) uv: vec2<f32>, @location(2) color: vec4<f32>) -> HudVary {
    var o: HudVary;
    o.clip = vec4<f32>(px.x * 2.0 * screen.size.z - 1.0, 1.0 - px.y * 2.0 * screen.size.w, 0.0, 1.0);
    o.uv = uv;
    o.color = color;
    return o;
}

@fragment
fn fs_hud(v: HudVary) -> @location(0) vec4<f32> {
    let ink = textureSample(font, font_sampler, v.uv).r;
    return vec4<f32>(v.color.rgb, v.color.a * ink);
}
