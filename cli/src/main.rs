//! `mcp-resolve`: a terminal client for MCP servers, ours or anyone's. It lists and calls a
//! server's tools, prompts and resources, and when the server stops to ask the user something
//! (elicitation: a form, or a page to open), it puts the question in front of the person at the
//! terminal — who asks, the message, each field with its rules, a review before anything is
//! sent — or answers it as the command line says (`--accept`, `--decline`, `--cancel`).
//!
//! ```text
//! mcp-resolve tools -- python notes_server.py
//! mcp-resolve call delete_folder path=/tmp/notes/drafts -- python notes_server.py
//! mcp-resolve call add a=1 b=2 --json --url http://127.0.0.1:8000/mcp
//! ```
//!
//! Exit codes: 0 done; 1 an error, a tool's error result, or a question with no terminal to ask
//! it on; 2 a usage error; 130 interrupted (Ctrl-C at a question). See `cli/README.md`.

mod ask;
mod form;
mod print;
mod ui;
mod url;

use ask::{Abort, Asker, Mode};
use clap::error::ErrorKind;
use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};
use mcp_resolve::client::{CallOptions, Client, ClientError, EraChoice, Stderr};
use mcp_resolve::protocol::LogLevel;
use serde_json::{Map, Value, json};
use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::time::Duration;
use ui::Ui;

/// A terminal client for MCP servers that puts the server's questions in front of a person.
///
/// The server is a command to start (everything after `--`, spoken to over stdin and stdout,
/// its stderr shown) or a Streamable HTTP endpoint (`--url`). When the server asks a question,
/// it is asked here: Enter answers, `d` declines, Esc cancels; answers are reviewed before they
/// are sent. Without a terminal, answer with `--accept JSON`, `--decline` or `--cancel`.
#[derive(Debug, Parser)]
#[command(name = "mcp-resolve", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    #[command(flatten)]
    options: Options,
}

/// Options every command takes.
#[derive(Debug, Args)]
struct Options {
    /// The server's Streamable HTTP endpoint (instead of `-- CMD ARGS…`).
    #[arg(long, global = true, value_name = "URL")]
    url: Option<String>,
    /// An HTTP header sent with every request (repeatable).
    #[arg(long = "header", global = true, value_name = "NAME:VALUE")]
    headers: Vec<String>,
    /// Sends `Authorization: Bearer TOKEN` with every HTTP request.
    #[arg(long, global = true, value_name = "TOKEN")]
    bearer: Option<String>,
    /// The protocol era: modern (2026-07-28, stateless), legacy (the initialize handshake), or
    /// auto (modern if the server speaks it).
    #[arg(long, global = true, value_enum, default_value_t = Era::Auto)]
    era: Era,
    /// Prints the raw result as JSON on stdout.
    #[arg(long, global = true)]
    json: bool,
    /// Seconds each request may take (time spent answering a question is not counted).
    #[arg(long, global = true, value_name = "SECS", default_value_t = 60.0)]
    timeout: f64,
    /// Answers every form question with this JSON object, and consents to every page (printed,
    /// not opened).
    #[arg(long, global = true, value_name = "JSON", conflicts_with_all = ["decline", "cancel"])]
    accept: Option<String>,
    /// Declines every question.
    #[arg(long, global = true, conflicts_with = "cancel")]
    decline: bool,
    /// Cancels every question.
    #[arg(long, global = true)]
    cancel: bool,
    /// The server's log messages shown from this level up (`off`: none).
    #[arg(long, global = true, value_name = "LEVEL", default_value = "info",
          value_parser = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency", "off"])]
    log_level: String,
}

/// `--era`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Era {
    /// 2026-07-28: no handshake, questions answered by retrying the request.
    Modern,
    /// 2025-11-25 and earlier: `initialize`, questions as requests from the server.
    Legacy,
    /// `server/discover` first, `initialize` if the server does not know it.
    Auto,
}

/// The server to start: everything after `--`.
#[derive(Debug, Args)]
struct Server {
    /// The server's command and its arguments, after `--` (instead of `--url`).
    #[arg(last = true, value_name = "CMD")]
    command: Vec<String>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Lists the server's tools and their arguments (* required).
    Tools {
        #[command(flatten)]
        server: Server,
    },
    /// Calls a tool: `call TOOL key=value… -- CMD ARGS…`. A value is JSON if it parses as JSON
    /// (`n=3`, `ok=true`, `tags=["a"]`), else a string (`path=/tmp/x`; `id='"7"'` for the
    /// string "7").
    Call {
        /// The tool.
        tool: String,
        /// Arguments as `key=value`, on top of `--args`.
        #[arg(value_name = "KEY=VALUE")]
        params: Vec<String>,
        /// Arguments as one JSON object.
        #[arg(long = "args", value_name = "JSON")]
        args_json: Option<String>,
        #[command(flatten)]
        server: Server,
    },
    /// Lists the server's prompts and their arguments (* required).
    Prompts {
        #[command(flatten)]
        server: Server,
    },
    /// Gets a prompt: `get PROMPT key=value… -- CMD ARGS…` (values are strings).
    Get {
        /// The prompt.
        prompt: String,
        /// Arguments as `key=value`.
        #[arg(value_name = "KEY=VALUE")]
        params: Vec<String>,
        #[command(flatten)]
        server: Server,
    },
    /// Lists the server's resources and resource templates.
    Resources {
        #[command(flatten)]
        server: Server,
    },
    /// Reads a resource.
    Read {
        /// The resource's URI.
        uri: String,
        #[command(flatten)]
        server: Server,
    },
}

impl Command {
    fn server(&self) -> &Server {
        match self {
            Self::Tools { server }
            | Self::Call { server, .. }
            | Self::Prompts { server }
            | Self::Get { server, .. }
            | Self::Resources { server }
            | Self::Read { server, .. } => server,
        }
    }
}

/// A usage error: clap's message and exit code 2.
fn usage(message: impl std::fmt::Display) -> ! {
    Cli::command().error(ErrorKind::ValueValidation, message).exit()
}

/// `key=value` pairs; a value is JSON when it parses as JSON, else the string itself.
fn pairs(params: &[String], json_values: bool) -> Map<String, Value> {
    let mut out = Map::new();
    for p in params {
        let Some((k, v)) = p.split_once('=') else {
            usage(format!("`{p}` is not KEY=VALUE"));
        };
        if k.is_empty() {
            usage(format!("`{p}` has no key before `=`"));
        }
        let value = if json_values {
            serde_json::from_str(v).unwrap_or_else(|_| Value::String(v.to_owned()))
        } else {
            Value::String(v.to_owned())
        };
        out.insert(k.to_owned(), value);
    }
    out
}

/// A tool's arguments: `--args`, then the `key=value` pairs over it.
fn call_arguments(args_json: Option<&str>, params: &[String]) -> Map<String, Value> {
    let mut arguments = args_json.map(|a| object("--args", a)).unwrap_or_default();
    arguments.extend(pairs(params, true));
    arguments
}

/// A JSON object given on the command line.
fn object(flag: &str, text: &str) -> Map<String, Value> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(m)) => m,
        Ok(other) => usage(format!("{flag} must be a JSON object, not {other}")),
        Err(e) => usage(format!("{flag} is not JSON: {e}")),
    }
}

/// How the run ended badly.
enum Failure {
    /// A client error.
    Client(ClientError),
    /// Ended by the question handler.
    Abort(Abort),
}

impl From<ClientError> for Failure {
    fn from(e: ClientError) -> Self {
        Self::Client(e)
    }
}

/// What a command prints, and its exit code.
struct Output {
    stdout: String,
    stderr: String,
    code: i32,
}

impl Output {
    fn ok(stdout: String) -> Self {
        Self {
            stdout,
            stderr: String::new(),
            code: 0,
        }
    }
}

/// Every page of a list, as the server sent its items.
async fn list(client: &Client, method: &str, member: &str) -> Result<Vec<Value>, ClientError> {
    client.list_all(method, member).await
}

/// Asks for the server's log messages, when it offers them.
async fn ask_for_logs(client: &Client, level: &str) {
    let Some(level) = LogLevel::parse(level) else { return };
    if client.server_capabilities().get("logging").is_none() {
        return;
    }
    if let Err(e) = client.set_log_level(level).await {
        tracing::warn!("could not set the server's log level: {e}");
    }
}

async fn work(client: &Client, cli: &Cli, ui: &Arc<Ui>, timeout: Duration) -> Result<Output, Failure> {
    let json_out = cli.options.json;
    match &cli.command {
        Command::Tools { .. } | Command::Prompts { .. } => {
            let (method, member) = match cli.command {
                Command::Tools { .. } => ("tools/list", "tools"),
                _ => ("prompts/list", "prompts"),
            };
            let items = list(client, method, member).await?;
            Ok(Output::ok(if json_out {
                print::pretty(&json!({ member: items }))
            } else {
                print::list(member, &items)
            }))
        }
        Command::Resources { .. } => {
            let resources = list(client, "resources/list", "resources").await?;
            // A server without templates may not know the method.
            let templates = match list(client, "resources/templates/list", "resourceTemplates").await {
                Ok(t) => t,
                Err(ClientError::Rpc(e)) => {
                    tracing::debug!("resources/templates/list: {}", e.message);
                    Vec::new()
                }
                Err(e) => return Err(e.into()),
            };
            if json_out {
                return Ok(Output::ok(print::pretty(
                    &json!({ "resources": resources, "resourceTemplates": templates }),
                )));
            }
            let mut text = print::list("resources", &resources);
            if !templates.is_empty() {
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(&print::list("templates", &templates));
            }
            Ok(Output::ok(text))
        }
        Command::Call {
            tool,
            params,
            args_json,
            ..
        } => {
            let arguments = call_arguments(args_json.as_deref(), params);
            // The client learns from tools/list which arguments it mirrors into headers (HTTP)
            // and which tools run as tasks (2025-11-25 asks for a task only for those).
            if let Err(e) = client.list_all_tools().await {
                tracing::debug!("tools/list before the call: {e}");
            }
            ask_for_logs(client, &cli.options.log_level).await;
            let progress_ui = Arc::clone(ui);
            let options = CallOptions::default()
                .timeout(timeout)
                .on_progress(move |p| progress_ui.progress(&p));
            let result = client.call_tool_with(tool, Value::Object(arguments), options).await?;
            ui.finish();
            let code = i32::from(result.is_error);
            if json_out {
                return Ok(Output {
                    stdout: print::pretty(&serde_json::to_value(&result).unwrap_or_default()),
                    stderr: String::new(),
                    code,
                });
            }
            let text = print::tool_result(&result);
            Ok(if result.is_error {
                Output {
                    stdout: String::new(),
                    stderr: format!("the tool {tool} failed: {text}"),
                    code,
                }
            } else {
                Output::ok(text)
            })
        }
        Command::Get { prompt, params, .. } => {
            let arguments = pairs(params, false);
            let arguments: Vec<(&str, &str)> = arguments
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str().unwrap_or_default()))
                .collect();
            ask_for_logs(client, &cli.options.log_level).await;
            let result = client.get_prompt(prompt, &arguments).await?;
            Ok(Output::ok(if json_out {
                print::pretty(&serde_json::to_value(&result).unwrap_or_default())
            } else {
                print::prompt(&result)
            }))
        }
        Command::Read { uri, .. } => {
            ask_for_logs(client, &cli.options.log_level).await;
            let result = client.read_resource(uri).await?;
            Ok(Output::ok(if json_out {
                print::pretty(&json!({ "contents": result.contents }))
            } else {
                print::resource(&result)
            }))
        }
    }
}

/// Prints `text` and a newline on stdout; a closed stdout (`| head`) is not an error.
fn out(text: &str) {
    if text.is_empty() {
        return;
    }
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{text}");
    let _ = stdout.flush();
}

async fn run(cli: Cli) -> i32 {
    let server = cli.command.server();
    match (&cli.options.url, server.command.is_empty()) {
        (Some(_), false) => usage("give the server either as `--url URL` or as `-- CMD ARGS…`, not both"),
        (None, true) => usage("no server: add `-- CMD ARGS…` (a server to start) or `--url URL`"),
        _ => {}
    }
    if !(cli.options.timeout.is_finite() && cli.options.timeout > 0.0) {
        usage("--timeout must be a positive number of seconds");
    }
    let timeout = Duration::from_secs_f64(cli.options.timeout);
    // Usage errors before any server is started.
    match &cli.command {
        Command::Call { params, args_json, .. } => drop(call_arguments(args_json.as_deref(), params)),
        Command::Get { params, .. } => drop(pairs(params, false)),
        _ => {}
    }
    if cli.options.url.is_some() {
        for h in &cli.options.headers {
            if !h.contains(':') {
                usage(format!("--header `{h}` is not NAME:VALUE"));
            }
        }
    }
    let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let mode = match (&cli.options.accept, cli.options.decline, cli.options.cancel) {
        (Some(a), _, _) => Mode::Accept(object("--accept", a)),
        (None, true, _) => Mode::Decline,
        (None, false, true) => Mode::Cancel,
        _ if interactive => Mode::Interactive,
        _ => Mode::NoTerminal,
    };
    let ui = Ui::new();
    let (abort_tx, mut abort_rx) = tokio::sync::mpsc::unbounded_channel::<Abort>();
    let asker = Asker::new(mode, Arc::clone(&ui), abort_tx);
    let notes_ui = Arc::clone(&ui);
    let mut builder = Client::builder()
        .client_info("mcp-resolve-cli", env!("CARGO_PKG_VERSION"))
        .era(match cli.options.era {
            Era::Modern => EraChoice::Stateless,
            Era::Legacy => EraChoice::Handshake,
            Era::Auto => EraChoice::Auto,
        })
        .request_timeout(timeout)
        .stderr(Stderr::Inherit)
        .elicitation(move |q| Arc::clone(&asker).answer(q))
        .on_notification(move |n| notes_ui.notification(&n));
    let connected = match &cli.options.url {
        Some(url) => {
            for h in &cli.options.headers {
                let Some((name, value)) = h.split_once(':') else {
                    usage(format!("--header `{h}` is not NAME:VALUE"));
                };
                builder = builder.header(name.trim(), value.trim());
            }
            if let Some(token) = &cli.options.bearer {
                builder = builder.bearer(token);
            }
            builder.http(url).await
        }
        None => {
            let mut command = tokio::process::Command::new(&server.command[0]);
            command.args(&server.command[1..]);
            builder.stdio(command).await
        }
    };
    let client = match connected {
        Ok(c) => c,
        Err(e) => {
            eprintln!("mcp-resolve: {e}");
            return 1;
        }
    };
    tracing::debug!(server = ?client.server_info(), version = ?client.protocol_version(), "connected");
    let outcome = tokio::select! {
        biased;
        Some(abort) = abort_rx.recv() => Err(Failure::Abort(abort)),
        r = work(&client, &cli, &ui, timeout) => r,
    };
    ui.finish();
    let code = match outcome {
        Ok(o) => {
            out(&o.stdout);
            if !o.stderr.is_empty() {
                eprintln!("{}", o.stderr);
            }
            o.code
        }
        Err(Failure::Client(e)) => {
            eprintln!("mcp-resolve: {e}");
            1
        }
        Err(Failure::Abort(a)) => {
            eprintln!("mcp-resolve: {}", a.message);
            a.code
        }
    };
    client.close().await;
    code
}

fn main() {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("mcp-resolve: cannot start the async runtime: {e}");
            std::process::exit(1);
        }
    };
    let code = runtime.block_on(run(cli));
    // A prompt still reading the terminal (the run was ended meanwhile) is not waited for.
    runtime.shutdown_background();
    std::process::exit(code);
}
