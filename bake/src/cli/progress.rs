//! Progress bars on a terminal, as the bake's progress sink.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::pipeline::progress::{Progress, StageProgress};

/// Draws one bar per batch of items on stderr (hidden when stderr is not a terminal).
pub struct Bars;

struct Bar(ProgressBar);

impl Progress for Bars {
    fn start(&self, stage: &str, items: u64) -> Box<dyn StageProgress + '_> {
        let pb = ProgressBar::with_draw_target(Some(items), ProgressDrawTarget::stderr());
        pb.set_style(ProgressStyle::with_template("{prefix:>10} [{bar:30}] {pos}/{len} {elapsed}").expect("valid template").progress_chars("=> "));
        pb.set_prefix(stage.to_owned());
        Box::new(Bar(pb))
    }
}

impl StageProgress for Bar {
    fn advance(&self, n: u64) {
        self.0.inc(n);
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        self.0.finish_and_clear();
    }
}

/// The steps a bake has begun and not ended, innermost last.
#[derive(Default)]
pub struct OpenSteps(std::sync::Mutex<Vec<String>>);

impl OpenSteps {
    /// The innermost step ("the start" before the first), as the budget's message names it.
    pub fn innermost(&self) -> String {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).last().cloned().unwrap_or_else(|| "the start".into())
    }

    fn record(&self, stage: &str, begins: bool) {
        let mut steps = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if begins {
            steps.push(stage.to_owned());
        } else if let Some(i) = steps.iter().rposition(|s| s == stage) {
            steps.remove(i);
        }
    }
}

/// Passes progress on to another sink and keeps the steps the bake is in, for the memory
/// budget's message when the bake is stopped.
pub struct StepRecorder<'a> {
    /// The sink that shows progress.
    pub inner: &'a dyn Progress,
    /// The steps begun and not ended.
    pub steps: std::sync::Arc<OpenSteps>,
}

impl Progress for StepRecorder<'_> {
    fn start(&self, stage: &str, items: u64) -> Box<dyn StageProgress + '_> {
        self.inner.start(stage, items)
    }

    fn step(&self, stage: &str, begins: bool) {
        self.steps.record(stage, begins);
        self.inner.step(stage, begins);
    }
}
