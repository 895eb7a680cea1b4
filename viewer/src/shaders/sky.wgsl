// Sky pass: one full-screen triangle; each pixel's view ray from the inverse view-projection.

struct SkyVary {
    @builtin(position) clip: vec4<f32>,
    @location(0) ndc: vec2<f32>,
}

@vertex
fn vs_sky(@builtin(vertex_index) i: u32) -> SkyVary {
    let uv = vec2<f32>(f32((i << 1u) & 2u), f32(i & 2u));
    let p = uv * 2.0 - 1.0;
    var o: SkyVary;
    o.clip = vec4<f32>(p, 0.0, 1.0);
    o.ndc = p;
    return o;
}

@fragment
fn fs_sky(v: SkyVary) -> SceneOut {
    let h = frame.inv_view_proj * vec4<f32>(v.ndc, 0.5, 1.0);
    let dir = normalize(h.xyz / h.w - frame.camera_pos.xyz);
    var o: SceneOut;
    o.color = vec4<f32>(tonemap(sky_radiance(dir)), 1.0);
    o.id = 0u;
    return o;
}
