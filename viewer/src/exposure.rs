//! Exposure: stops added to the renderer's fixed exposure before tone mapping, so that a dark
//! view (a cave lit only by bounce light) can be inspected. Set by hand (`--exposure EV`, keys) or
//! metered from the picture (`--exposure auto`): the log-average luminance of the last frame,
//! read back from a few rows of the finished colour target ([`crate::renderer::meter`]), is
//! brought to a mid-grey key.

use std::str::FromStr;

/// Stops the exposure may reach either way: beyond them a view is all black or all white anyway.
pub const EV_RANGE: (f32, f32) = (-8.0, 12.0);

/// The log-average of the exposed scene luminance that automatic exposure aims for: the
/// photographic mid-grey key. Like any camera meter it darkens views brighter than grey (sunlit
/// snow meters a stop or two below 0 EV) and brightens dark ones (a cave tunnel meters +3 to +4 EV).
pub const KEY: f32 = 0.18;

/// A change smaller than this many stops counts as converged (a still headless picture meters
/// until its exposure moves less than this).
pub const CONVERGED_EV: f32 = 0.02;

/// `--exposure`: a fixed stop value or `auto`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ExposureArg {
    /// Fixed stops (0 = the renderer's own exposure).
    Stops(f32),
    /// Metered from the last frame.
    Auto,
}

impl Default for ExposureArg {
    fn default() -> Self {
        ExposureArg::Stops(0.0)
    }
}

impl FromStr for ExposureArg {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        if s.eq_ignore_ascii_case("auto") {
            return Ok(ExposureArg::Auto);
        }
        let ev: f32 = s.trim().parse().map_err(|_| format!("expected a stop value such as 2 or -1.5, or auto; got {s:?}"))?;
        if !(EV_RANGE.0..=EV_RANGE.1).contains(&ev) {
            return Err(format!("{ev} EV is outside {}..={}", EV_RANGE.0, EV_RANGE.1));
        }
        Ok(ExposureArg::Stops(ev))
    }
}

/// The exposure a view is drawn with, and how it changes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Exposure {
    /// Metering on.
    pub auto: bool,
    /// The stops the next frame is drawn with.
    pub ev: f32,
    /// With metering on, stops added to the metered value (the keys change it).
    pub compensation: f32,
}

impl Exposure {
    /// The exposure `arg` asks for; automatic exposure starts at 0 EV and meters from there.
    pub fn new(arg: ExposureArg) -> Self {
        match arg {
            ExposureArg::Stops(ev) => Exposure { auto: false, ev, compensation: 0.0 },
            ExposureArg::Auto => Exposure { auto: true, ev: 0.0, compensation: 0.0 },
        }
    }

    /// The keys' step: `stops` brighter (negative: darker); with metering on, it moves the
    /// compensation, and the exposure follows it at the next metering.
    pub fn step(&mut self, stops: f32) {
        let clamp = |v: f32| v.clamp(EV_RANGE.0, EV_RANGE.1);
        if self.auto {
            self.compensation = clamp(self.compensation + stops);
        } else {
            self.ev = clamp(self.ev + stops);
        }
    }

    /// Turns metering on or off; off keeps the current stops, so the picture does not jump.
    pub fn toggle_auto(&mut self) {
        self.auto = !self.auto;
        self.compensation = 0.0;
    }

    /// Moves the exposure a fraction `rate` (0..=1) of the way toward what a metering of
    /// `log_average` (scene luminance, before exposure) asks for; returns the stops it still
    /// differed by before the move. No-op (returns 0) with metering off.
    pub fn adapt(&mut self, log_average: f32, rate: f32) -> f32 {
        if !self.auto {
            return 0.0;
        }
        let target = (target_ev(log_average) + self.compensation).clamp(EV_RANGE.0, EV_RANGE.1);
        let diff = target - self.ev;
        self.ev += diff * rate.clamp(0.0, 1.0);
        diff.abs()
    }

    /// The HUD's exposure line.
    pub fn label(&self) -> String {
        if self.auto {
            format!("exposure auto {:+.1} EV (compensation {:+.1})", self.ev, self.compensation)
        } else {
            format!("exposure {:+.1} EV", self.ev)
        }
    }
}

/// The stops that bring a scene of log-average luminance `log_average` (with the renderer's base
/// exposure folded in) to [`KEY`].
pub fn target_ev(log_average: f32) -> f32 {
    (KEY / log_average.max(1e-6)).log2()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stops_and_auto() {
        assert_eq!("2".parse::<ExposureArg>(), Ok(ExposureArg::Stops(2.0)));
        assert_eq!("-1.5".parse::<ExposureArg>(), Ok(ExposureArg::Stops(-1.5)));
        assert_eq!("AUTO".parse::<ExposureArg>(), Ok(ExposureArg::Auto));
        assert!("bright".parse::<ExposureArg>().is_err());
        assert!("40".parse::<ExposureArg>().is_err());
        assert!("nan".parse::<ExposureArg>().is_err());
    }

    #[test]
    fn keys_move_the_stops_or_the_compensation() {
        let mut e = Exposure::new(ExposureArg::Stops(1.0));
        e.step(0.5);
        assert_eq!((e.ev, e.compensation), (1.5, 0.0));
        e.step(100.0);
        assert_eq!(e.ev, EV_RANGE.1);
        let mut a = Exposure::new(ExposureArg::Auto);
        a.step(-1.0);
        assert_eq!((a.ev, a.compensation), (0.0, -1.0));
        a.toggle_auto();
        assert!(!a.auto && a.compensation == 0.0);
    }

    #[test]
    fn metering_brings_the_log_average_to_the_key() {
        let mut e = Exposure::new(ExposureArg::Auto);
        // A scene 8 times darker than the key needs 3 stops.
        let diff = e.adapt(KEY / 8.0, 1.0);
        assert!((e.ev - 3.0).abs() < 1e-5 && (diff - 3.0).abs() < 1e-5, "{e:?}");
        // Half way, then converged.
        e.ev = 0.0;
        e.adapt(KEY / 8.0, 0.5);
        assert!((e.ev - 1.5).abs() < 1e-5);
        e.compensation = 1.0;
        e.adapt(KEY / 8.0, 1.0);
        assert!((e.ev - 4.0).abs() < 1e-5);
        assert!(e.adapt(KEY / 8.0, 1.0) < CONVERGED_EV);
        // A black frame does not send the exposure to infinity.
        e.adapt(0.0, 1.0);
        assert_eq!(e.ev, EV_RANGE.1);
        let mut manual = Exposure::new(ExposureArg::Stops(0.5));
        assert_eq!(manual.adapt(KEY / 8.0, 1.0), 0.0);
        assert_eq!(manual.ev, 0.5, "manual exposure ignores metering");
    }
}
