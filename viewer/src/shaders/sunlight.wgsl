// Shading shared by the layers that draw lit surfaces (terrain, trees), compiled after common.wgsl and
// before the layer's own source, which declares `shadow_map` and `shadow_sampler`.

// PCF of the sun's shadow map over a 3×3-texel tent (four bilinear comparison taps), compared `bias`
// short of the receiver's depth; 1 = lit. The receiver is pushed along its normal by a texel or
// two (normal-offset), which removes acne without detaching shadows from their casters.
fn sun_visibility(world: vec3<f32>, n: vec3<f32>, bias: f32) -> f32 {
    if ((frame.params.z & 1u) == 0u) {
        return 1.0;
    }
    let p = frame.light_view_proj * vec4<f32>(world + n * (frame.sun_dir.w * 1.5), 1.0);
    let q = p.xyz / p.w;
    let uv = q.xy * vec2<f32>(0.5, -0.5) + 0.5;
    if (any(uv < vec2<f32>(0.0)) || any(uv > vec2<f32>(1.0)) || q.z > 1.0) {
        return 1.0;
    }
    let texel = 0.5 / f32(frame.params.y);
    let z = q.z - bias;
    let lit = textureSampleCompareLevel(shadow_map, shadow_sampler, uv + vec2<f32>(-texel, -texel), z)
        + textureSampleCompareLevel(shadow_map, shadow_sampler, uv + vec2<f32>(texel, -texel), z)
        + textureSampleCompareLevel(shadow_map, shadow_sampler, uv + vec2<f32>(-texel, texel), z)
        + textureSampleCompareLevel(shadow_map, shadow_sampler, uv + vec2<f32>(texel, texel), z);
    return lit * 0.25;
}

// The ambient light where the bake has none: a hemisphere between the ground's and the sky's
// colours by the normal's height, at the frame's ambient strength.
fn hemisphere_ambient(n: vec3<f32>) -> vec3<f32> {
    return mix(frame.ground.rgb, frame.sky_zenith.rgb + frame.sky_horizon.rgb * 0.5, n.z * 0.5 + 0.5) * frame.ground.w;
}

fn fog_over(c: vec3<f32>, world: vec3<f32>) -> vec3<f32> {
    let d = world - frame.camera_pos.xyz;
    let dist = length(d);
    let amount = (1.0 - exp(-dist * frame.fog.x)) * frame.fog.w;
    let horizon = normalize(vec3<f32>(d.xy, abs(d.z) * 0.1 + 1e-3 * dist));
    return mix(c, sky_radiance(horizon), amount);
}

// Transmittance of the sun's light down to `world` through the water above it: the flat surface's
// Fresnel transmittance and Beer–Lambert absorption along the refracted sun's path (per colour).
// Exactly 1 without water and above the level, so worlds without water shade as before.
fn sun_water(world: vec3<f32>) -> vec3<f32> {
    if ((frame.params.w & 1u) == 0u || world.z >= frame.water.x) {
        return vec3<f32>(1.0);
    }
    let path = (frame.water.x - world.z) / max(frame.water.z, 0.05);
    return frame.water.y * exp(-frame.water_absorption.rgb * path);
}
