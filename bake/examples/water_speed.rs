//! Wave and caustic bake speed at the default size: 64 frames × 256² texels × 4 caustic
//! depths (the goal: ≤ 3 s on the 2-core machine, release).
//!
//! `cargo run --release -p kiln-bake --example water_speed [threads] [repeats] [resolution] [frames] [depths]`
//! (defaults: 2 threads, 3 repeats, 256, 64, 4 automatic depths).
//!
//! Prints each part's time (median over the repeats), the total, the automatic depths, each map's
//! contrast range and the energy check: every (frame, depth) map's mean against the flat-water
//! Fresnel transmittance.
//! Figures and the machine: BENCHMARKS.md, "Water".

use std::time::Instant;

use kiln_bake::optics::WATER_IOR;
use kiln_bake::water::{bake_caustics, bake_waves, contrast, CausticDepths, CausticSpec, Spectrum, WaveSpec};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut arg = |default: usize| args.next().map_or(default, |a| a.parse().expect("arguments are numbers"));
    let (threads, repeats, resolution, frames, depths) = (arg(2), arg(3).max(1), arg(256), arg(64), arg(4));
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("thread pool");
    let spec = WaveSpec {
        spectrum: Spectrum::Jonswap,
        wind_speed: 10.0,
        wind_direction: 30.0,
        fetch: 50_000.0,
        choppiness: 1.0,
        amplitude: 1.0,
        metres_per_unit: 1.0,
        patch_size: 64.0,
        period: 32.0,
        frames: frames as u32,
        resolution: resolution as u32,
        seed: 1,
    };
    let elevation = 60f32.to_radians();
    let caustic = CausticSpec {
        sun_direction: [elevation.cos() * 0.8, elevation.cos() * 0.6, elevation.sin()],
        ior: WATER_IOR,
        depths: CausticDepths::Auto(depths),
    };
    println!("{frames} frames x {resolution}² texels x {depths} depths, {threads} thread(s), {repeats} run(s)");
    let (mut waves_s, mut caustics_s, mut total_s) = (Vec::new(), Vec::new(), Vec::new());
    let mut last = None;
    for _ in 0..repeats {
        let start = Instant::now();
        let waves = pool.install(|| bake_waves(&spec)).expect("waves");
        let mid = Instant::now();
        let c = pool.install(|| bake_caustics(&waves, &caustic)).expect("caustics");
        let end = Instant::now();
        waves_s.push((mid - start).as_secs_f64());
        caustics_s.push((end - mid).as_secs_f64());
        total_s.push((end - start).as_secs_f64());
        last = Some(c);
    }
    let c = last.expect("one run");
    println!("waves    {:.3} s (median)", median(waves_s));
    println!("caustics {:.3} s (median)", median(caustics_s));
    println!("total    {:.3} s (median)", median(total_s));
    println!("depths {:?}", c.depths);
    let n = resolution * resolution;
    let d = c.depths.len();
    let mut worst = 0.0f64;
    for (d_i, depth) in c.depths.iter().enumerate() {
        let (mut lo, mut hi) = (f32::MAX, f32::MIN);
        for f in 0..frames {
            let map = &c.maps[(f * d + d_i) * n..(f * d + d_i + 1) * n];
            let mean = map.iter().map(|&v| v as f64).sum::<f64>() / n as f64;
            worst = worst.max((mean / c.flat_transmittance as f64 - 1.0).abs());
            let k = contrast(map);
            (lo, hi) = (lo.min(k), hi.max(k));
        }
        println!("depth {depth:.3}: contrast {lo:.3}..{hi:.3}");
    }
    println!("energy: flat transmittance {:.5}, worst |mean/flat − 1| over frames and depths {:.3} %", c.flat_transmittance, 100.0 * worst);
}
