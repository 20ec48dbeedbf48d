//! What the client shows on stderr besides the questions: the server's log messages, a progress
//! bar, and colour when stderr is a terminal. While a question is on screen, log lines wait and
//! the bar is put away, so nothing is drawn over the prompt.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use mcp_resolve::client::{Notification, Progress};
use serde_json::Value;
use std::io::IsTerminal;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// The shared state of stderr.
#[derive(Debug)]
pub(crate) struct Ui {
    /// Colour (stderr is a terminal and `NO_COLOR` is unset).
    pub(crate) color: bool,
    /// stderr is a terminal (progress bars are drawn).
    tty: bool,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    bar: Option<ProgressBar>,
    asking: bool,
    held: Vec<String>,
}

impl Ui {
    /// Looks at stderr and the environment.
    pub(crate) fn new() -> Arc<Self> {
        let tty = std::io::stderr().is_terminal();
        Arc::new(Self {
            color: tty && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
            tty,
            state: Mutex::new(State::default()),
        })
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `s` with the ANSI attributes `code` (e.g. `1` bold, `33` yellow) when colour is on.
    pub(crate) fn paint(&self, code: &str, s: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_owned()
        }
    }

    /// A line on stderr, below the bar if one is drawn; held while a question is on screen.
    pub(crate) fn line(&self, text: String) {
        let mut st = self.state();
        if st.asking {
            st.held.push(text);
        } else if let Some(bar) = &st.bar {
            bar.println(text);
        } else {
            eprintln!("{text}");
        }
    }

    /// A question takes the screen: the bar is put away and log lines wait.
    pub(crate) fn begin_question(&self) {
        let mut st = self.state();
        st.asking = true;
        if let Some(bar) = st.bar.take() {
            bar.finish_and_clear();
        }
    }

    /// The question is answered: the lines that waited are shown.
    pub(crate) fn end_question(&self) {
        let held = {
            let mut st = self.state();
            st.asking = false;
            std::mem::take(&mut st.held)
        };
        for line in held {
            self.line(line);
        }
    }

    /// Clears the bar (before the result is printed).
    pub(crate) fn finish(&self) {
        if let Some(bar) = self.state().bar.take() {
            bar.finish_and_clear();
        }
    }

    /// A progress report: a bar when the total is known, a spinner otherwise (terminals only).
    pub(crate) fn progress(&self, p: &Progress) {
        tracing::debug!(progress = p.progress, total = ?p.total, message = ?p.message, "progress");
        let mut st = self.state();
        if !self.tty || st.asking {
            return;
        }
        let bar = st.bar.get_or_insert_with(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            bar.enable_steady_tick(std::time::Duration::from_millis(120));
            bar
        });
        let counts = match p.total {
            Some(t) => format!("{}/{}", number(p.progress), number(t)),
            None => number(p.progress),
        };
        let message = match &p.message {
            Some(m) => format!("{counts} {m}"),
            None => counts,
        };
        match p.total.filter(|t| *t > 0.0) {
            Some(total) => {
                if bar.length().is_none() {
                    bar.set_style(
                        ProgressStyle::with_template("{bar:32.cyan/blue} {msg}")
                            .unwrap_or_else(|_| ProgressStyle::default_bar())
                            .progress_chars("=> "),
                    );
                }
                bar.set_length(1000);
                bar.set_position(((p.progress / total).clamp(0.0, 1.0) * 1000.0) as u64);
            }
            None => {
                bar.set_style(
                    ProgressStyle::with_template("{spinner} {msg}")
                        .unwrap_or_else(|_| ProgressStyle::default_spinner()),
                );
            }
        }
        bar.set_message(message);
    }

    /// A notification of the server's: log messages are shown, the rest is traced.
    pub(crate) fn notification(&self, n: &Notification) {
        if n.method != "notifications/message" {
            tracing::debug!(method = %n.method, params = %n.params, "notification");
            return;
        }
        let level = n.params.get("level").and_then(Value::as_str).unwrap_or("info");
        let code = match level {
            "debug" => "2",
            "info" | "notice" => "36",
            "warning" => "33",
            _ => "31",
        };
        let logger = n
            .params
            .get("logger")
            .and_then(Value::as_str)
            .map(|l| format!("{l}: "))
            .unwrap_or_default();
        let data = match n.params.get("data") {
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => String::new(),
        };
        let tag = self.paint(code, &format!("[{level}]"));
        self.line(format!("{tag} {logger}{data}"));
    }
}

/// A progress count without a trailing `.0`.
fn number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v:.1}")
    }
}
