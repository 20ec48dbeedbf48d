//! The interactive `mcp-resolve` as a person uses it: run in a detached tmux session of a fixed
//! size (120×40), typed at with `send-keys`, read with `capture-pane`. Each step waits (bounded)
//! for the text it expects before typing, so the tests hold on a loaded machine; a failure shows
//! the pane. Each test has a tmux server of its own (a private socket), killed when the test
//! ends, whether it passed or not.
//!
//! Servers: the official Python SDK's Notes server (`delete_folder` asks "Delete anyway?", a
//! boolean), and this crate's `questions` example (a form with a bounded integer, a titled
//! choice, a multi-select, a boolean and a date; a URL-mode sign-in).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use support::{bin, py_notes, python, questions_bin, rollout_bin, setup};

/// How long one step may take to show its text (a server starting on a loaded machine).
const STEP: Duration = Duration::from_secs(30);

fn tmux_bin() -> &'static str {
    static TMUX: OnceLock<String> = OnceLock::new();
    TMUX.get_or_init(|| setup("setup-tmux.sh"))
}

/// `s` as one word of `sh`.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// A tmux server of the test's own, running one session; killed on drop.
struct Pane {
    socket: String,
}

impl Pane {
    /// Starts `mcp-resolve args…` in a 120×40 session; the pane stays after it exits, with
    /// `[exit N]` below its output.
    fn start(test: &str, args: &[&str]) -> Self {
        let socket = format!("mcpr-{test}-{}", std::process::id());
        let command = std::iter::once(bin())
            .chain(args.iter().copied())
            .map(quote)
            .collect::<Vec<_>>()
            .join(" ");
        let shell = format!("env RUST_LOG=warn {command}; echo \"[exit $?]\"; sleep 3600");
        let pane = Self { socket };
        let out = pane.tmux(&[
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            "t",
            "-x",
            "120",
            "-y",
            "40",
            &shell,
        ]);
        assert!(
            out.status.success(),
            "tmux new-session: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        pane
    }

    fn tmux(&self, args: &[&str]) -> Output {
        Command::new(tmux_bin())
            .args(["-L", &self.socket])
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("run tmux")
    }

    /// The pane's text (wrapped lines joined).
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.tmux(&["capture-pane", "-p", "-J", "-t", "t"]).stdout).into_owned()
    }

    /// Waits until the pane shows every one of `texts`; fails showing the pane.
    fn wait_for(&self, texts: &[&str]) -> String {
        let until = Instant::now() + STEP;
        loop {
            let screen = self.text();
            if texts.iter().all(|t| screen.contains(t)) {
                return screen;
            }
            assert!(
                Instant::now() < until,
                "waited {STEP:?} for {texts:?}; the pane shows:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Keys, in tmux's names (`Enter`, `Escape`, `Space`, `Down`, `BSpace`, `C-c`) or as text.
    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "t"];
        args.extend_from_slice(keys);
        let out = self.tmux(&args);
        assert!(
            out.status.success(),
            "tmux send-keys: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

impl Drop for Pane {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
    }
}

/// `mcp-resolve call delete_folder path=/tmp/notes/drafts` against the Python Notes server
/// (its own stderr dropped, so only the client draws on the pane).
fn notes_call(test: &str, era: &str) -> Pane {
    let notes = py_notes();
    Pane::start(
        test,
        &[
            "call",
            "delete_folder",
            "path=/tmp/notes/drafts",
            "--era",
            era,
            "--",
            "sh",
            "-c",
            r#"exec "$0" "$1" 2>/dev/null"#,
            python(),
            &notes,
        ],
    )
}

const FIRST_SCREEN: &str = "[Enter] answer   [d] decline   [Esc] cancel";
const REVIEW: &str = "[Enter] submit   [e] edit again   [d] decline   [Esc] cancel";

#[test]
fn a_form_answered_reviewed_and_submitted() {
    let pane = notes_call("answer", "auto");
    let screen = pane.wait_for(&[FIRST_SCREEN]);
    assert!(
        screen.contains("Notes asks:") && screen.contains("/tmp/notes/drafts has 2 file(s). Delete anyway?"),
        "who asks and the message:\n{screen}"
    );
    assert!(screen.contains("fields: Ok *"), "the field, marked required:\n{screen}");
    pane.keys(&["Enter"]);
    pane.wait_for(&["? Ok *"]);
    pane.keys(&["y", "Enter"]);
    let screen = pane.wait_for(&[REVIEW]);
    assert!(screen.contains("Review:") && screen.contains("Ok *  yes"), "{screen}");
    pane.keys(&["Enter"]);
    pane.wait_for(&["deleted /tmp/notes/drafts", "[exit 0]"]);
}

#[test]
fn a_question_declined_with_d() {
    let pane = notes_call("decline", "legacy");
    pane.wait_for(&[FIRST_SCREEN]);
    pane.keys(&["d"]);
    pane.wait_for(&["→ decline", "declined: folder not deleted", "[exit 0]"]);
}

#[test]
fn a_question_cancelled_with_escape_in_a_field() {
    let pane = notes_call("cancel", "modern");
    pane.wait_for(&[FIRST_SCREEN]);
    pane.keys(&["Enter"]);
    pane.wait_for(&["? Ok *", "Esc: cancel"]);
    pane.keys(&["Escape"]);
    pane.wait_for(&["(question cancelled)", "cancelled: folder not deleted", "[exit 0]"]);
}

#[test]
fn ctrl_c_at_a_question_cancels_it_and_quits_with_130() {
    let pane = notes_call("interrupt", "auto");
    pane.wait_for(&[FIRST_SCREEN]);
    pane.keys(&["C-c"]);
    pane.wait_for(&["interrupted", "[exit 130]"]);
}

#[test]
fn an_invalid_value_corrected_a_multi_select_and_an_edit_before_submit() {
    let questions = questions_bin().to_string_lossy().into_owned();
    let pane = Pane::start("form", &["call", "order", "item=pizza", "--", &questions]);
    let screen = pane.wait_for(&[FIRST_SCREEN]);
    assert!(
        screen.contains("questions 0.1.0 asks:") && screen.contains("How should the pizza be made?"),
        "{screen}"
    );
    assert!(
        screen.contains("fields: How many *, Toppings *, Deliver on, Gift wrap, Size"),
        "required fields first, marked:\n{screen}"
    );
    pane.keys(&["Enter"]);
    // The prompt line and its help line are drawn in two writes: wait for both (the first
    // alone once raced the second on a loaded machine).
    pane.wait_for(&["? How many *", "One to five · whole number, 1 to 5"]);
    // Out of bounds: refused as typed, corrected in place.
    pane.keys(&["9", "Enter"]);
    pane.wait_for(&["must be at most 5"]);
    pane.keys(&["BSpace", "x", "Enter"]);
    pane.wait_for(&["`x` is not a whole number"]);
    pane.keys(&["BSpace", "2", "Enter"]);
    // The multi-select: none picked is refused (minItems 1); then cheese and olives.
    pane.wait_for(&["? Toppings *", "[ ] cheese", "[ ] olives", "[ ] peppers"]);
    pane.keys(&["Enter"]);
    pane.wait_for(&["pick at least 1"]);
    pane.keys(&["Space", "Down", "Space"]);
    pane.wait_for(&["[x] cheese", "[x] olives", "[ ] peppers"]);
    pane.keys(&["Enter"]);
    // A date that does not exist, then a real one.
    pane.wait_for(&["? Deliver on", "a date (YYYY-MM-DD)"]);
    pane.keys(&["2025-02-30", "Enter"]);
    pane.wait_for(&["not a date (YYYY-MM-DD)"]);
    pane.keys(&["BSpace", "BSpace", "1", "0", "Enter"]);
    pane.wait_for(&["? Gift wrap (y/N)"]);
    pane.keys(&["Enter"]);
    // The titled choice, its default (Medium) under the cursor; one down is Large.
    pane.wait_for(&["? Size", "> Medium (30 cm)"]);
    pane.keys(&["Down", "Enter"]);
    let screen = pane.wait_for(&[REVIEW]);
    for row in [
        "How many *    2",
        "Toppings *    cheese, olives",
        "Deliver on    2025-02-10",
        "Gift wrap     no",
        "Size          Large (35 cm)",
    ] {
        assert!(screen.contains(row), "review row {row:?}:\n{screen}");
    }
    // Edit again: every answer comes back prefilled; change only the count.
    pane.keys(&["e"]);
    pane.wait_for(&["→ edit again", "? How many * 2"]);
    pane.keys(&["BSpace", "3", "Enter"]);
    pane.wait_for(&["? Toppings *", "[x] cheese", "[x] olives"]);
    pane.keys(&["Enter"]);
    pane.wait_for(&["? Deliver on 2025-02-10"]);
    pane.keys(&["Enter"]);
    pane.wait_for(&["? Gift wrap (y/N)"]);
    pane.keys(&["y", "Enter"]);
    pane.wait_for(&["? Size", "> Large (35 cm)"]);
    pane.keys(&["Enter"]);
    pane.wait_for(&["How many *    3", "Gift wrap     yes", REVIEW]);
    pane.keys(&["Enter"]);
    pane.wait_for(&[
        "ordered 3 large pizza with cheese, olives, gift-wrapped, on 2025-02-10",
        "[exit 0]",
    ]);
}

#[test]
fn a_url_consent_refused_after_seeing_the_host_and_warnings() {
    let questions = questions_bin().to_string_lossy().into_owned();
    let pane = Pane::start(
        "url",
        &[
            "call",
            "sign_in",
            "page=https://xn--shp-tna.example/sign-in",
            "--",
            &questions,
        ],
    );
    let screen = pane.wait_for(&["[y] open in your browser   [d] decline   [Esc] cancel"]);
    for shown in [
        "questions 0.1.0 asks you to open a page:",
        "Sign in to the shop to go on",
        "https://xn--shp-tna.example/sign-in?flow=",
        "host: xn--shp-tna.example",
        "punycode host: it reads shöp.example",
    ] {
        assert!(screen.contains(shown), "{shown:?}:\n{screen}");
    }
    pane.keys(&["d"]);
    pane.wait_for(&["→ decline", "declined: not signed in", "[exit 0]"]);
}

#[test]
fn a_url_question_cancelled_with_escape_and_plain_http_warned_about() {
    let questions = questions_bin().to_string_lossy().into_owned();
    let pane = Pane::start(
        "urlcancel",
        &[
            "call",
            "sign_in",
            "page=http://127.0.0.1:9/sign-in",
            "--era",
            "legacy",
            "--",
            &questions,
        ],
    );
    let screen = pane.wait_for(&["[y] open in your browser"]);
    assert!(screen.contains("plain http, not https"), "{screen}");
    pane.keys(&["Escape"]);
    pane.wait_for(&["→ cancel", "cancelled: not signed in", "[exit 0]"]);
}

/// A call the server runs as a task, on both eras: the task's status messages show while it runs,
/// its question mid-run is asked like any other, and the task's result is printed.
#[test]
fn a_task_shows_its_status_and_asks_mid_run_on_both_eras() {
    let rollout = rollout_bin().to_string_lossy().into_owned();
    for era in ["modern", "legacy"] {
        let pane = Pane::start(
            &format!("task-{era}"),
            &[
                "call",
                "rollout",
                "service=api",
                "canary_fails=true",
                "step_ms=1500",
                "--era",
                era,
                "--",
                "sh",
                "-c",
                r#"exec "$0" 2>/dev/null"#,
                &rollout,
            ],
        );
        pane.wait_for(&["watching the canary"]);
        let screen = pane.wait_for(&[FIRST_SCREEN]);
        assert!(
            screen.contains("The canary of api failed its health checks. Roll back?"),
            "{era}: the task's question:\n{screen}"
        );
        pane.keys(&["Enter"]);
        pane.wait_for(&["? Roll back"]);
        pane.keys(&["y", "Enter"]);
        pane.wait_for(&[REVIEW]);
        pane.keys(&["Enter"]);
        pane.wait_for(&["rolled back: api stays on the previous version", "[exit 0]"]);
    }
}
