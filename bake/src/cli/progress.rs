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
