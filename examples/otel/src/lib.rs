//! The pieces of the `otel` example, shared by its binary (`src/main.rs`, exporting over OTLP)
//! and its test (`tests/span_tree.rs`, exporting to memory):
//!
//! - [`server`]: a small projects server whose tool [`archive_project`] asks the user to confirm,
//!   with [`join_client_trace`] as its [`Server::on_trace_context`] hook;
//! - [`otlp_exporter`], [`tracer_provider`] and [`subscriber`]: the pipeline from the runtime's
//!   `tracing` spans (target `mcp_resolve`, see `mcp_resolve::telemetry`) to an OpenTelemetry
//!   exporter.
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let provider = mcp_resolve_example_otel::tracer_provider(mcp_resolve_example_otel::otlp_exporter()?);
//! tracing::subscriber::set_global_default(mcp_resolve_example_otel::subscriber(&provider))?;
//! // … serve `mcp_resolve_example_otel::server()`, then:
//! provider.shutdown()?;
//! # Ok(())
//! # }
//! ```

use mcp_resolve::prelude::*;
use mcp_resolve::telemetry::TraceContext;
use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanExporter};
use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::{EnvFilter, Targets};
use tracing_subscriber::layer::SubscriberExt;

/// The service name spans are exported under, unless `OTEL_SERVICE_NAME` (or `service.name` in
/// `OTEL_RESOURCE_ATTRIBUTES`) names another.
pub const SERVICE_NAME: &str = "mcp-resolve-otel-example";

/// The projects the server knows (name → why it was archived, once it is).
pub struct Projects(Mutex<BTreeMap<String, Option<String>>>);

impl Projects {
    /// Two active projects.
    pub fn sample() -> Self {
        Self(Mutex::new(BTreeMap::from([
            ("apollo".to_owned(), None),
            ("gemini".to_owned(), None),
        ])))
    }

    /// `None`: no such project; `Some(None)`: active; `Some(Some(reason))`: archived.
    fn get(&self, name: &str) -> Option<Option<String>> {
        self.0.lock().ok().and_then(|p| p.get(name).cloned())
    }

    fn archive(&self, name: &str, reason: String) {
        if let Ok(mut projects) = self.0.lock()
            && let Some(entry) = projects.get_mut(name)
        {
            *entry = Some(reason);
        }
    }
}

/// Archive this project?
#[derive(Clone, Debug, FormSchema)]
pub struct ArchiveConfirm {
    /// Archive it now?
    pub archive: bool,
    /// Why? (kept with the project)
    #[form(max_length = 200)]
    pub reason: String,
}

/// Asks before archiving an active project; an unknown or archived one needs no question.
#[resolver]
async fn confirm_archive(project: String, projects: State<Projects>) -> Resolution<ArchiveConfirm> {
    match projects.get(&project) {
        Some(None) => Elicit::form(format!("Archive {project}? Its issues become read-only.")).into(),
        _ => Resolution::Value(ArchiveConfirm {
            archive: false,
            reason: String::new(),
        }),
    }
}

/// Archive a project, asking the user to confirm first.
#[tool]
pub async fn archive_project(
    /// The project, e.g. `apollo`.
    project: String,
    projects: State<Projects>,
    #[resolve(confirm_archive)] confirm: ElicitationResult<ArchiveConfirm>,
) -> String {
    match (projects.get(&project), confirm) {
        (None, _) => format!("no project named {project}"),
        (Some(Some(_)), _) => format!("{project} is archived already"),
        (Some(None), ElicitationResult::Accepted(ArchiveConfirm { archive: true, reason })) => {
            projects.archive(&project, reason);
            format!("archived {project}")
        }
        (Some(None), ElicitationResult::Accepted(_)) => format!("kept {project}"),
        (Some(None), ElicitationResult::Declined | ElicitationResult::Cancelled) => {
            format!("{project} not archived")
        }
    }
}

/// Whether a project is active or archived.
#[tool(read_only = true, idempotent = true)]
pub async fn project_status(
    /// The project, e.g. `apollo`.
    project: String,
    projects: State<Projects>,
) -> String {
    match projects.get(&project) {
        None => format!("no project named {project}"),
        Some(None) => format!("{project} is active"),
        Some(Some(reason)) => format!("{project} is archived: {reason}"),
    }
}

/// The server: both tools on the sample projects, each request's span joined to the trace its
/// client carried ([`join_client_trace`]).
pub fn server() -> Server {
    Server::new("projects")
        .version(env!("CARGO_PKG_VERSION"))
        .state(Projects::sample())
        .tool(archive_project)
        .tool(project_status)
        .on_trace_context(join_client_trace)
}

/// The [`Server::on_trace_context`] hook: makes the W3C trace context a request carried
/// (`params._meta.traceparent` / `tracestate`, else the HTTP `traceparent` header) the parent of
/// its `mcp.request` span, so the server's spans join the client's trace. Without an
/// OpenTelemetry layer the span stays a root (logged at debug).
pub fn join_client_trace(span: &tracing::Span, trace: &TraceContext) {
    let mut carrier = HashMap::with_capacity(2);
    carrier.insert("traceparent".to_owned(), trace.traceparent().to_owned());
    if let Some(state) = trace.tracestate() {
        carrier.insert("tracestate".to_owned(), state.to_owned());
    }
    let parent = TraceContextPropagator::new().extract(&carrier);
    if let Err(e) = span.set_parent(parent) {
        tracing::debug!(error = %e, "the client's trace context is not the span's parent");
    }
}

/// The OTLP span exporter: HTTP/protobuf to `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, else
/// `OTEL_EXPORTER_OTLP_ENDPOINT` followed by `/v1/traces`, else
/// `http://localhost:4318/v1/traces`; `OTEL_EXPORTER_OTLP_HEADERS` and
/// `OTEL_EXPORTER_OTLP_TIMEOUT` apply too. Plain HTTP only: this build has no TLS.
///
/// # Errors
///
/// A malformed endpoint or header in the environment, naming the variable.
pub fn otlp_exporter() -> Result<opentelemetry_otlp::SpanExporter, opentelemetry_otlp::ExporterBuildError> {
    use opentelemetry_otlp::WithExportConfig as _;
    opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
        .build()
}

/// A tracer provider that batches spans to `exporter` (OTLP in the binary, memory in the test),
/// as the service [`SERVICE_NAME`] unless the environment names another. Call its `shutdown` on
/// the way out: it exports what is still queued.
pub fn tracer_provider<E: SpanExporter + 'static>(exporter: E) -> SdkTracerProvider {
    // `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES` are read here; the SDK's fallback is
    // `unknown_service:…`.
    let detected = Resource::builder().build();
    let named = detected
        .get(&opentelemetry::Key::from_static_str("service.name"))
        .is_some_and(|name| !name.as_str().starts_with("unknown_service"));
    let resource = if named {
        detected
    } else {
        Resource::builder().with_service_name(SERVICE_NAME).build()
    };
    SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(resource)
        .build()
}

/// What the binary installs as its global subscriber: a log on stderr filtered by `RUST_LOG`
/// (`info` when unset), and, whatever `RUST_LOG` says, the runtime's spans (target
/// `mcp_resolve`, `INFO`) as OpenTelemetry spans through `provider`. A target filter matches by
/// prefix, so the `INFO`, `WARN` and `ERROR` events of the framework (`mcp_resolve_runtime::…`)
/// and of this crate (`mcp_resolve_example_otel`) go along, as events of the span they happen in.
pub fn subscriber(provider: &SdkTracerProvider) -> impl tracing::Subscriber + Send + Sync + 'static {
    let log = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")));
    let spans = tracing_opentelemetry::layer()
        .with_tracer(provider.tracer(SERVICE_NAME))
        .with_filter(Targets::new().with_target("mcp_resolve", tracing::Level::INFO));
    tracing_subscriber::registry().with(log).with(spans)
}
