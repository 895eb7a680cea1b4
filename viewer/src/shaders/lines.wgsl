// Tile bounds: coloured line lists in world space, depth-tested against the terrain.

struct LineVary {
    @builtin(position) clip: vec4<f32>,
    @location(0) color: vec4<f32>,
}

@vertex
fn vs_lines(@location(0) position: vec3<f32>, @location(1) color: vec4<f32>) -> LineVary {
    var o: LineVary;
    o.clip = frame.view_proj * vec4<f32>(position, 1.0);
    o.color = color;
    return o;
}

@fragment
fn fs_lines(v: LineVary) -> SceneOut {
    var o: SceneOut;
    o.color = v.color;
    o.id = 0u; // masked out by the pipeline: lines never change the picked tile
    return o;
}
