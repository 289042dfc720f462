//! `check`'s progress bar on stderr: files done, states stored so far, the
//! tests that failed so far, the elapsed time and the file being checked,
//! shown only on a terminal and only after a second.

use std::time::Duration;

/// A progress bar on stderr, only when stderr is a terminal, and only
/// once the run has taken a second (short runs and piped or redirected
/// output stay exactly as they are).
pub struct Progress {
    bar: Option<indicatif::ProgressBar>,
    /// States stored and finding kinds found by the searches so far
    /// (shown on the bar).
    counters: bc_explore::Counters,
    /// Tests done that did not pass (a finding their `expect` does not
    /// allow, a stop, an error), and the input checked last started.
    failing: std::sync::Arc<std::sync::atomic::AtomicU64>,
    current: std::sync::Arc<std::sync::Mutex<String>>,
    /// The thread that shows the bar after a second and keeps it current,
    /// and the flag that stops it.
    ticker: Option<(
        std::thread::JoinHandle<()>,
        std::sync::Arc<std::sync::atomic::AtomicBool>,
    )>,
}

impl Progress {
    /// A bar over `files` files, drawn only when stderr is a terminal and
    /// only once the run has taken a second; it shows the files done, the
    /// states stored so far (so one long search shows progress too) and
    /// the elapsed time.
    pub fn new(files: usize) -> Progress {
        use std::io::IsTerminal;
        use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
        let counters = bc_explore::Counters::default();
        let failing = std::sync::Arc::new(AtomicU64::new(0));
        let current = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar =
                indicatif::ProgressBar::with_draw_target(Some(files as u64), indicatif::ProgressDrawTarget::hidden());
            bar.set_style(
                indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} files, {elapsed}, {msg}")
                    .expect("a valid template"),
            );
            bar.set_message("0");
            bar
        });
        let ticker = bar.clone().map(|bar| {
            let stop = std::sync::Arc::new(AtomicBool::new(false));
            let (stop2, counters2) = (stop.clone(), counters.clone());
            let (failing2, current2) = (failing.clone(), current.clone());
            let handle = std::thread::spawn(move || {
                let start = std::time::Instant::now();
                while !stop2.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(100));
                    if start.elapsed() < Duration::from_secs(1) {
                        continue;
                    }
                    if bar.is_hidden() {
                        bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
                    }
                    let now = current2.lock().map(|c| c.clone()).unwrap_or_default();
                    bar.set_message(format!(
                        "{} states, {} findings, {} failing; {now}",
                        counters2.states.load(Ordering::Relaxed),
                        counters2.findings.load(Ordering::Relaxed),
                        failing2.load(Ordering::Relaxed)
                    ));
                }
            });
            (handle, stop)
        });
        Progress {
            bar,
            counters,
            failing,
            current,
            ticker,
        }
    }
    /// Where a check says which input it starts (shown on the bar).
    pub fn current(&self) -> std::sync::Arc<std::sync::Mutex<String>> {
        self.current.clone()
    }
    /// The counters searches add their stored states and found kinds to,
    /// when a bar may show.
    pub fn counters(&self) -> Option<bc_explore::Counters> {
        self.bar.as_ref().map(|_| self.counters.clone())
    }
    /// Runs `f` (which prints) with the bar out of the way.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        match &self.bar {
            Some(bar) => bar.suspend(f),
            None => f(),
        }
    }
    /// One more file done; `passed`: as its `expect` says.
    pub fn done_one(&self, passed: bool) {
        if let Some(bar) = &self.bar {
            if !passed {
                self.failing.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            bar.inc(1);
        }
    }
    /// Stops the ticker and clears the bar.
    pub fn finish(&mut self) {
        if let Some((handle, stop)) = self.ticker.take() {
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            let _ = handle.join();
        }
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
