//! A deployment that asks for confirmation with a richer form, seed 000's deploy form: a titled
//! choice with a default that the answer must still carry (`required`), a boolean with a default,
//! and an optional date-time.
//!
//! ```text
//! cargo run --example deploy
//! ```

use mcp_resolve::prelude::*;

/// Where to deploy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, FormSchema)]
pub(crate) enum Environment {
    #[form(title = "Staging")]
    Stg,
    #[form(title = "Production")]
    Prd,
}

/// The deployment confirmation.
#[derive(Clone, Debug, FormSchema)]
pub(crate) struct DeployConfirm {
    // Pre-selected as staging, but the person must send it: no answer is not staging.
    #[form(title = "Environment", default = "stg", required)]
    environment: Environment,
    #[form(title = "Notify the on-call channel", default = true)]
    notify: bool,
    #[form(title = "Deploy at", format = "date-time")]
    window: Option<String>,
}

/// Always confirm a deployment with the human.
#[resolver]
async fn confirm_deployment(service: String) -> Elicit<DeployConfirm> {
    Elicit::form(format!("Confirm the deployment of {service}"))
}

/// Deploy a service.
#[tool(destructive = true)]
pub(crate) async fn deploy(
    /// The service to deploy.
    service: String,
    #[resolve(confirm_deployment)] confirm: ElicitationResult<DeployConfirm>,
) -> Result<String, String> {
    let c = match confirm {
        ElicitationResult::Accepted(c) => c,
        ElicitationResult::Declined => return Ok(format!("declined: {service} not deployed")),
        ElicitationResult::Cancelled => return Ok(format!("cancelled: {service} not deployed")),
    };
    let target = match c.environment {
        Environment::Stg => "staging",
        Environment::Prd => "production",
    };
    let when = c.window.unwrap_or_else(|| "now".into());
    let notify = if c.notify {
        ", notifying the on-call channel"
    } else {
        ""
    };
    Ok(format!("deploying {service} to {target} at {when}{notify}"))
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .init();
    Server::new("deploy").tool(deploy).serve_stdio().await
}
