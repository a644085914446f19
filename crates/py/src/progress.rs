//! The progress display of a batch of simulations, fed by the engine's
//! `Progress` callback from any number of worker threads.
//!
//! Correctness properties: nothing is drawn unless progress was asked for
//! and stderr is a terminal (checked once, in [`Board::new`]); no bar exists
//! before the batch has run for [`Board::DELAY`] (bars are made lazily by
//! the first report after it, so a quick run never flickers a bar); bars
//! are cleared when the batch ends ([`Board::finish`]).

use coflowkit_sim::Progress;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// One bar per simulation of a batch, created on demand.
pub struct Board {
    enabled: bool,
    start: Instant,
    names: Vec<String>,
    started: Vec<AtomicBool>,
    bars: Mutex<Option<(MultiProgress, Vec<ProgressBar>)>>,
    /// What a bar counts (`coflows`, or a decomposed run's `links`).
    unit: &'static str,
}

impl Board {
    /// How long a batch runs before bars appear.
    pub const DELAY: Duration = Duration::from_secs(1);

    /// A board for simulations named `names`; draws only if `wanted` and
    /// stderr is a terminal.
    pub fn new(wanted: bool, names: Vec<String>) -> Board {
        Board::with_unit(wanted, names, "coflows")
    }

    /// A board whose bars count `unit` (the progress's `coflows_done` of
    /// `n_coflows` are then that many of them).
    pub fn with_unit(wanted: bool, names: Vec<String>, unit: &'static str) -> Board {
        let started = names.iter().map(|_| AtomicBool::new(false)).collect();
        let enabled = wanted && std::io::stderr().is_terminal();
        Board {
            enabled,
            start: Instant::now(),
            names,
            started,
            bars: Mutex::new(None),
            unit,
        }
    }

    /// Records that simulation `k` has left the queue.
    pub fn start(&self, k: usize) {
        if let Some(s) = self.started.get(k) {
            s.store(true, Ordering::Relaxed);
        }
        if let Some((_, bars)) = self
            .bars
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
        {
            if let Some(bar) = bars.get(k) {
                bar.set_message("running");
            }
        }
    }

    /// Records how far simulation `k` has come.
    pub fn report(&self, k: usize, p: Progress) {
        if !self.enabled || self.start.elapsed() < Board::DELAY {
            return;
        }
        let mut guard = self.bars.lock().unwrap_or_else(PoisonError::into_inner);
        let (_, bars) = guard.get_or_insert_with(|| self.make_bars(p.n_coflows as u64));
        if let Some(bar) = bars.get(k) {
            bar.set_position(p.coflows_done as u64);
            bar.set_message(format!("{:.1} s simulated", p.now.as_secs_f64()));
        }
    }

    /// Clears the bars, if any were drawn.
    pub fn finish(&self) {
        let mut guard = self.bars.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((multi, bars)) = guard.take() {
            for bar in bars {
                bar.finish_and_clear();
            }
            // Clearing a terminal that went away is not worth an error.
            let _ = multi.clear();
        }
    }

    fn make_bars(&self, n_coflows: u64) -> (MultiProgress, Vec<ProgressBar>) {
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
        let width = self.names.iter().map(String::len).max().unwrap_or(0);
        let template = format!(
            "{{prefix}} [{{elapsed_precise}}] {{wide_bar}} {{pos}}/{{len}} {}, {{msg}}",
            self.unit
        );
        let style = ProgressStyle::with_template(&template)
            .unwrap_or_else(|_| ProgressStyle::default_bar());
        let bars = self
            .names
            .iter()
            .zip(&self.started)
            .map(|(name, started)| {
                let bar = ProgressBar::new(n_coflows)
                    .with_style(style.clone())
                    .with_elapsed(self.start.elapsed());
                let bar = multi.add(bar);
                bar.set_prefix(format!("{name:>width$}"));
                bar.set_message(if started.load(Ordering::Relaxed) {
                    "running"
                } else {
                    "queued"
                });
                bar.enable_steady_tick(Duration::from_millis(200));
                bar
            })
            .collect();
        (multi, bars)
    }
}

impl Drop for Board {
    fn drop(&mut self) {
        self.finish();
    }
}
