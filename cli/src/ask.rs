//! The client's elicitation handler: a server's question put to the person at the terminal
//! (inquire's prompts, on stderr), or answered as the command line says (`--accept`,
//! `--decline`, `--cancel`), or — with neither a terminal nor those flags — an error that ends
//! the run at once instead of a prompt nobody can see.
//!
//! Keys at a question: at the first screen `Enter` answers, `d` declines, `Esc` cancels; in a
//! field `Esc` cancels the question (as do inquire's `Ctrl-D` and `Ctrl-G`); at the review
//! `Enter` submits, `e` edits again, `d` declines, `Esc` cancels; on a URL question `y` opens the
//! page, `d` (or `n`) declines, `Esc` cancels. `Ctrl-C` anywhere cancels the question and quits.

use crate::form::{self, Field, Kind};
use crate::ui::Ui;
use crate::url::Page;
use crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
use inquire::error::InquireError;
use inquire::validator::Validation;
use mcp_resolve::client::{Answer, ElicitationKind, ElicitationRequest};
use serde_json::{Map, Value};
use std::io::Write;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};
use tokio::sync::mpsc::UnboundedSender;

/// How questions are answered.
#[derive(Clone, Debug)]
pub(crate) enum Mode {
    /// By the person at the terminal.
    Interactive,
    /// Every form accepted with this content; every URL question consented to (the page is
    /// printed, not opened).
    Accept(Map<String, Value>),
    /// Every question declined.
    Decline,
    /// Every question cancelled.
    Cancel,
    /// No terminal and no answer on the command line: the first question ends the run.
    NoTerminal,
}

/// Why the run must end now, and with which exit code.
#[derive(Debug)]
pub(crate) struct Abort {
    /// The process's exit code.
    pub(crate) code: i32,
    /// The one line printed on stderr.
    pub(crate) message: String,
}

/// Answers the server's questions.
#[derive(Debug)]
pub(crate) struct Asker {
    mode: Mode,
    ui: Arc<Ui>,
    abort: UnboundedSender<Abort>,
    /// One question on the terminal at a time.
    turn: Mutex<()>,
}

/// Why a question ended without an answer from its prompts.
enum Stop {
    /// The person pressed Esc (or inquire's other cancel keys).
    Cancel,
    /// The person pressed Ctrl-C.
    Interrupted,
    /// The terminal failed.
    Io(String),
}

impl From<InquireError> for Stop {
    fn from(e: InquireError) -> Self {
        match e {
            InquireError::OperationCanceled => Self::Cancel,
            InquireError::OperationInterrupted => Self::Interrupted,
            other => Self::Io(other.to_string()),
        }
    }
}

impl From<std::io::Error> for Stop {
    fn from(e: std::io::Error) -> Self {
        Self::Io(e.to_string())
    }
}

/// A choice made with one key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pick {
    Go,
    Edit,
    Decline,
    Cancel,
}

/// Who asks, as a person should read it: the server's title or name, and its version.
fn who(q: &ElicitationRequest) -> String {
    let s = &q.server;
    let name = match &s.title {
        Some(t) if t != &s.name => format!("{t} ({})", s.name),
        _ => s.name.clone(),
    };
    if s.version.is_empty() {
        name
    } else {
        format!("{name} {}", s.version)
    }
}

impl Asker {
    /// A handler answering in `mode`; `abort` ends the run (no terminal, Ctrl-C, a broken
    /// terminal).
    pub(crate) fn new(mode: Mode, ui: Arc<Ui>, abort: UnboundedSender<Abort>) -> Arc<Self> {
        if !ui.color {
            inquire::set_global_render_config(inquire::ui::RenderConfig::empty());
        }
        Arc::new(Self {
            mode,
            ui,
            abort,
            turn: Mutex::new(()),
        })
    }

    fn stop(&self, code: i32, message: String) {
        // The receiver is gone only when the run is over already.
        let _ = self.abort.send(Abort { code, message });
    }

    /// The answer to `q`.
    pub(crate) async fn answer(self: Arc<Self>, q: ElicitationRequest) -> Answer {
        let named = |what: &str| {
            self.ui
                .line(format!("{} asked \"{}\": {what}", who(&q), q.message.trim()));
        };
        match &self.mode {
            Mode::Accept(content) => match q.url() {
                Some(url) => {
                    named("consented (--accept)");
                    self.ui.line(format!("open this page to go on: {url}"));
                    Answer::consent()
                }
                None => {
                    named("accepted (--accept)");
                    Answer::Accept(Some(content.clone()))
                }
            },
            Mode::Decline => {
                named("declined (--decline)");
                Answer::Decline
            }
            Mode::Cancel => {
                named("cancelled (--cancel)");
                Answer::Cancel
            }
            Mode::NoTerminal => {
                self.stop(
                    1,
                    format!(
                        "{} asks \"{}\", but there is no terminal to ask it on: answer with --accept JSON, --decline or --cancel",
                        who(&q),
                        q.message.trim()
                    ),
                );
                Answer::Cancel
            }
            Mode::Interactive => {
                let me = Arc::clone(&self);
                tokio::task::spawn_blocking(move || me.ask_person(&q))
                    .await
                    .unwrap_or(Answer::Cancel)
            }
        }
    }

    /// Puts `q` to the person (a blocking thread: the prompts read the terminal).
    fn ask_person(&self, q: &ElicitationRequest) -> Answer {
        let _turn = self.turn.lock().unwrap_or_else(PoisonError::into_inner);
        self.ui.begin_question();
        let outcome = match &q.kind {
            ElicitationKind::Form { schema } => self.form(q, schema),
            ElicitationKind::Url { url, .. } => self.page(q, url),
            // A kind this client does not know: nothing to show.
            _ => Ok(Answer::Decline),
        };
        self.ui.end_question();
        match outcome {
            Ok(answer) => answer,
            Err(Stop::Cancel) => {
                eprintln!("{}", self.ui.paint("2", "  (question cancelled)"));
                Answer::Cancel
            }
            Err(Stop::Interrupted) => {
                self.stop(130, "interrupted: the question was cancelled".into());
                Answer::Cancel
            }
            Err(Stop::Io(e)) => {
                self.stop(1, format!("the terminal failed while asking: {e}"));
                Answer::Cancel
            }
        }
    }

    fn header(&self, q: &ElicitationRequest, what: &str) {
        eprintln!();
        eprintln!("{} {} {what}", self.ui.paint("1;35", "?"), self.ui.paint("1", &who(q)));
        for line in q.message.lines() {
            eprintln!("  {line}");
        }
    }

    /// A form: the first screen, each field, the review.
    fn form(&self, q: &ElicitationRequest, schema: &Map<String, Value>) -> Result<Answer, Stop> {
        let fields = form::fields(schema);
        self.header(q, "asks:");
        if let Some(t) = schema.get("title").and_then(Value::as_str) {
            eprintln!("  {}", self.ui.paint("1", t));
        }
        if !fields.is_empty() {
            let names: Vec<String> = fields
                .iter()
                .map(|f| format!("{}{}", f.label(), if f.required { " *" } else { "" }))
                .collect();
            eprintln!(
                "  {} {}   {}",
                self.ui.paint("2", "fields:"),
                names.join(", "),
                self.ui.paint("2", "(* required)")
            );
        }
        // A form without fields asks only for the choice.
        let go = if fields.is_empty() { "accept" } else { "answer" };
        match self.keys(
            &[(Pick::Go, go), (Pick::Decline, "decline"), (Pick::Cancel, "cancel")],
            true,
        )? {
            Pick::Decline => return Ok(Answer::Decline),
            Pick::Cancel => return Err(Stop::Cancel),
            Pick::Go | Pick::Edit if fields.is_empty() => return Ok(Answer::Accept(Some(Map::new()))),
            Pick::Go | Pick::Edit => {}
        }
        let mut answers: Map<String, Value> = Map::new();
        loop {
            for f in &fields {
                let before = answers.get(&f.name).or(f.default.as_ref()).cloned();
                match self.field(f, before.as_ref())? {
                    Some(v) => {
                        answers.insert(f.name.clone(), v);
                    }
                    None => {
                        answers.remove(&f.name);
                    }
                }
            }
            eprintln!("  {}", self.ui.paint("1", "Review:"));
            let width = fields.iter().map(|f| f.label().chars().count() + 2).max().unwrap_or(0);
            for f in &fields {
                let label = format!("{}{}", f.label(), if f.required { " *" } else { "" });
                let shown = answers
                    .get(&f.name)
                    .map_or_else(|| self.ui.paint("2", "(left empty)"), |v| f.show(v));
                eprintln!("    {label:<width$}  {shown}");
            }
            match self.keys(
                &[
                    (Pick::Go, "submit"),
                    (Pick::Edit, "edit again"),
                    (Pick::Decline, "decline"),
                    (Pick::Cancel, "cancel"),
                ],
                true,
            )? {
                Pick::Go => return Ok(Answer::Accept(Some(answers))),
                Pick::Edit => continue,
                Pick::Decline => return Ok(Answer::Decline),
                Pick::Cancel => return Err(Stop::Cancel),
            }
        }
    }

    /// One field's answer (`None`: left empty), `before` prefilled.
    fn field(&self, f: &Field, before: Option<&Value>) -> Result<Option<Value>, Stop> {
        let label = format!("{}{}", f.label(), if f.required { " *" } else { "" });
        let mut help = Vec::new();
        if let Some(d) = &f.description
            && Some(d.as_str()) != f.title.as_deref()
        {
            help.push(d.clone());
        }
        help.push(f.rules());
        if !f.required {
            help.push("optional".into());
        }
        help.push("Esc: cancel".into());
        let help = help.join(" · ");
        const EMPTY: &str = "(leave empty)";
        match &f.kind {
            Kind::Boolean if f.required || before.is_some() => {
                let mut c = inquire::Confirm::new(&label).with_help_message(&help);
                match before.and_then(Value::as_bool) {
                    Some(b) => c = c.with_default(b),
                    None => c = c.with_placeholder("y/n"),
                }
                Ok(Some(Value::Bool(c.prompt()?)))
            }
            Kind::Boolean => {
                let options = vec!["yes".to_owned(), "no".to_owned(), EMPTY.to_owned()];
                let picked = inquire::Select::new(&label, options)
                    .with_help_message(&help)
                    .with_starting_cursor(2)
                    .raw_prompt()?;
                Ok(match picked.index {
                    0 => Some(Value::Bool(true)),
                    1 => Some(Value::Bool(false)),
                    _ => None,
                })
            }
            Kind::Choice(choices) => {
                let mut options: Vec<String> = choices.iter().map(|c| c.title.clone()).collect();
                if !f.required {
                    options.push(EMPTY.to_owned());
                }
                let start = before
                    .and_then(|b| choices.iter().position(|c| &c.value == b))
                    .unwrap_or(if f.required { 0 } else { choices.len() });
                let picked = inquire::Select::new(&label, options)
                    .with_help_message(&help)
                    .with_starting_cursor(start)
                    .raw_prompt()?;
                Ok(choices.get(picked.index).map(|c| c.value.clone()))
            }
            Kind::Multi { choices, .. } => {
                let options: Vec<String> = choices.iter().map(|c| c.title.clone()).collect();
                let selected: Vec<usize> = match before {
                    Some(Value::Array(items)) => choices
                        .iter()
                        .enumerate()
                        .filter(|(_, c)| items.contains(&c.value))
                        .map(|(i, _)| i)
                        .collect(),
                    _ => Vec::new(),
                };
                let checker = f.clone();
                let help = format!("{help} · Space: pick · Enter: done");
                let picked = inquire::MultiSelect::new(&label, options)
                    .with_help_message(&help)
                    .with_default(&selected)
                    .with_validator(move |picks: &[inquire::list_option::ListOption<&String>]| {
                        Ok(match checker.check_picks(picks.len()) {
                            Ok(()) => Validation::Valid,
                            Err(e) => Validation::Invalid(e.into()),
                        })
                    })
                    .raw_prompt()?;
                if picked.is_empty() && !f.required {
                    return Ok(None);
                }
                Ok(Some(Value::Array(
                    picked
                        .iter()
                        .filter_map(|o| choices.get(o.index).map(|c| c.value.clone()))
                        .collect(),
                )))
            }
            Kind::Text { .. } | Kind::Integer { .. } | Kind::Number { .. } | Kind::Json => {
                let prefill = before.map(|v| f.as_input(v)).unwrap_or_default();
                let checker = f.clone();
                let typed = inquire::Text::new(&label)
                    .with_initial_value(&prefill)
                    .with_help_message(&help)
                    .with_validator(move |s: &str| {
                        Ok(match checker.parse(s) {
                            Ok(_) => Validation::Valid,
                            Err(e) => Validation::Invalid(e.into()),
                        })
                    })
                    .prompt()?;
                f.parse(&typed).map_err(Stop::Io)
            }
        }
    }

    /// A URL-mode question: the page shown in full, its host picked out, warnings; opened only
    /// when the person agrees.
    fn page(&self, q: &ElicitationRequest, url: &str) -> Result<Answer, Stop> {
        self.header(q, "asks you to open a page:");
        let page = Page::parse(url);
        match &page {
            Some(p) => {
                eprintln!("  {}", p.highlighted(|h| self.ui.paint("1;4;33", h)));
                eprintln!("  {} {}", self.ui.paint("2", "host:"), self.ui.paint("1", p.host()));
                for w in p.warnings() {
                    eprintln!("  {} {w}", self.ui.paint("1;31", "warning:"));
                }
            }
            None => {
                eprintln!("  {url}");
                eprintln!(
                    "  {} this is no web address (scheme://host…): it will not be opened",
                    self.ui.paint("1;31", "warning:")
                );
            }
        }
        let openable = page.as_ref().is_some_and(Page::openable);
        let pick = if openable {
            self.keys(
                &[
                    (Pick::Go, "open in your browser"),
                    (Pick::Decline, "decline"),
                    (Pick::Cancel, "cancel"),
                ],
                // Enter does not open a page: only `y` does.
                false,
            )?
        } else {
            self.keys(&[(Pick::Decline, "decline"), (Pick::Cancel, "cancel")], false)?
        };
        match pick {
            Pick::Go => {
                match open_browser(url) {
                    Ok(()) => eprintln!("  opened in your browser; waiting for the page to be done (Ctrl-C stops)"),
                    Err(why) => eprintln!("  could not start a browser ({why}): open the page yourself: {url}"),
                }
                Ok(Answer::consent())
            }
            Pick::Decline | Pick::Edit => Ok(Answer::Decline),
            Pick::Cancel => Err(Stop::Cancel),
        }
    }

    /// Shows `picks` with their keys and waits for one: `y` (and Enter, when `enter`) for
    /// [`Pick::Go`], `e` for [`Pick::Edit`], `d` (or `n`) for [`Pick::Decline`], Esc (or `c`,
    /// Ctrl-D, Ctrl-G) for [`Pick::Cancel`]; Ctrl-C interrupts. The choice is echoed by its label.
    fn keys(&self, picks: &[(Pick, &str)], enter: bool) -> Result<Pick, Stop> {
        let prompt: Vec<String> = picks
            .iter()
            .map(|(pick, label)| {
                let key = match pick {
                    Pick::Go if enter => "Enter",
                    Pick::Go => "y",
                    Pick::Edit => "e",
                    Pick::Decline => "d",
                    Pick::Cancel => "Esc",
                };
                format!("[{key}] {label}")
            })
            .collect();
        eprint!("  {} ", self.ui.paint("36", &prompt.join("   ")));
        let _ = std::io::stderr().flush();
        let offered = |p: Pick| picks.iter().any(|(q, _)| *q == p);
        let raw = RawMode::on()?;
        let picked = loop {
            let Event::Key(k) = event::read()? else { continue };
            if k.kind != KeyEventKind::Press {
                continue;
            }
            let pick = if k.modifiers.contains(KeyModifiers::CONTROL) {
                match k.code {
                    KeyCode::Char('c') => {
                        drop(raw);
                        eprintln!("^C");
                        return Err(Stop::Interrupted);
                    }
                    // As in inquire's prompts.
                    KeyCode::Char('d' | 'g') => Pick::Cancel,
                    _ => continue,
                }
            } else {
                match k.code {
                    KeyCode::Enter if enter => Pick::Go,
                    KeyCode::Esc => Pick::Cancel,
                    KeyCode::Char(c) => match c.to_ascii_lowercase() {
                        'y' => Pick::Go,
                        'e' => Pick::Edit,
                        'd' | 'n' => Pick::Decline,
                        'c' => Pick::Cancel,
                        _ => continue,
                    },
                    _ => continue,
                }
            };
            if offered(pick) {
                break pick;
            }
        };
        drop(raw);
        let said = picks.iter().find(|(p, _)| *p == picked).map_or("", |(_, label)| label);
        eprintln!("{}", self.ui.paint("1", &format!("→ {said}")));
        Ok(picked)
    }
}

/// Raw mode while a key is awaited; restored when dropped, whatever happens.
struct RawMode;

impl RawMode {
    fn on() -> std::io::Result<Self> {
        crossterm::terminal::enable_raw_mode()?;
        Ok(Self)
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        let _ = crossterm::terminal::disable_raw_mode();
    }
}

/// Opens `url` in the person's browser (`open` on macOS, `xdg-open` elsewhere).
fn open_browser(url: &str) -> Result<(), String> {
    let opener = if cfg!(target_os = "macos") { "open" } else { "xdg-open" };
    let mut child = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| format!("{opener}: {e}"))?;
    // xdg-open returns once the browser has the page; one that keeps running is taken as opened.
    let until = Instant::now() + Duration::from_secs(5);
    while Instant::now() < until {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return Ok(()),
            Ok(Some(status)) => return Err(format!("{opener} exited with {status}")),
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => return Err(format!("{opener}: {e}")),
        }
    }
    Ok(())
}
