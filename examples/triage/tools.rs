//! What the server offers: the `close_issues` tool, the `triage` prompt and the
//! `issues://{+repo}/open` resource template.

use super::model::{Account, ClosingComment, Tracker};
use super::resolvers::{closing_comment, confirm_close, pick_issues, sign_in};
use mcp_resolve::prelude::*;
use mcp_resolve::resource::NotFound;

/// Close the open issues of a repository whose title contains some words. Asks the user which of
/// the matching issues to close, to sign in to the tracker, why (when more than three), and to
/// confirm.
#[tool(destructive = true)]
pub(crate) async fn close_issues(
    /// The repository, `owner/name`.
    repo: String,
    /// Words the issues' titles contain, e.g. `crash`.
    query: String,
    #[resolve(pick_issues)] ids: ElicitationResult<Vec<u32>>,
    #[resolve(sign_in)] account: ElicitationResult<Option<Account>>,
    #[resolve(closing_comment)] comment: ElicitationResult<Option<ClosingComment>>,
    #[resolve(confirm_close)] confirmed: ElicitationResult<Confirm>,
    tracker: State<Tracker>,
) -> Result<String, String> {
    // Mistakes the model can fix itself are ordinary errors, not questions for the user.
    if tracker.open_issues(&repo).is_none() {
        return Err(format!(
            "there is no repository {repo}; the repositories are {}",
            tracker.repos().join(", ")
        ));
    }
    let ids = match ids {
        ElicitationResult::Accepted(ids) if ids.is_empty() => {
            return Err(format!("no open issue of {repo} has \"{query}\" in its title"));
        }
        ElicitationResult::Accepted(ids) => ids,
        ElicitationResult::Declined => return Ok("Nothing closed: you chose no issues.".into()),
        ElicitationResult::Cancelled => return Ok("Nothing closed: cancelled.".into()),
    };
    let Account { account } = match account {
        ElicitationResult::Accepted(Some(account)) => account,
        ElicitationResult::Accepted(None) | ElicitationResult::Declined => {
            return Ok("Nothing closed: you did not sign in to the tracker.".into());
        }
        ElicitationResult::Cancelled => return Ok("Nothing closed: cancelled.".into()),
    };
    let comment = match comment {
        ElicitationResult::Accepted(comment) => comment.map(|c| c.comment),
        ElicitationResult::Declined => return Ok("Nothing closed: no closing comment given.".into()),
        ElicitationResult::Cancelled => return Ok("Nothing closed: cancelled.".into()),
    };
    match confirmed {
        ElicitationResult::Accepted(Confirm { ok: true }) => {}
        ElicitationResult::Accepted(Confirm { ok: false }) | ElicitationResult::Declined => {
            return Ok("Nothing closed: not confirmed.".into());
        }
        ElicitationResult::Cancelled => return Ok("Nothing closed: cancelled.".into()),
    }
    let closed = tracker.close(&repo, &ids, comment.as_deref(), &account);
    if closed.is_empty() {
        return Ok("Nothing closed: those issues were closed meanwhile.".into());
    }
    let closed: Vec<String> = closed.iter().map(|id| format!("#{id}")).collect();
    Ok(format!("Closed {} in {repo} as {account}.", closed.join(", ")))
}

/// The repositories whose name starts with what was typed (completions of `repo`).
async fn repo_names(value: String, tracker: State<Tracker>) -> Vec<String> {
    let mut names = tracker.repos();
    names.retain(|r| r.starts_with(&value));
    names
}

/// Triage a repository: the open issues, and what to look for.
#[prompt(title = "Triage a repository")]
pub(crate) async fn triage(
    /// The repository, `owner/name`.
    #[arg(complete = repo_names)]
    repo: String,
    tracker: State<Tracker>,
) -> Result<String, String> {
    let Some(open) = tracker.open_issues(&repo) else {
        return Err(format!("there is no repository {repo}"));
    };
    let list: Vec<String> = open.iter().map(|i| format!("- #{} {}", i.id, i.title)).collect();
    Ok(format!(
        "These are the open issues of {repo}:\n{}\nFind the duplicates and the ones already fixed, \
         and close them with `close_issues`.",
        list.join("\n")
    ))
}

/// The open issues of a repository (`owner/name`), as JSON.
#[resource(template = "issues://{+repo}/open", mime_type = "application/json")]
pub(crate) async fn open_issues(repo: String, tracker: State<Tracker>) -> Result<String, NotFound> {
    let open = tracker.open_issues(&repo).ok_or(NotFound)?;
    Ok(serde_json::to_string(&open).unwrap_or_default())
}
