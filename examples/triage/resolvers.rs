//! The questions `close_issues` asks, one resolver each, in the order the user sees them:
//!
//! 1. [`pick_issues`]: which of the matching issues to close (options from the tracker, built
//!    when asked), unless one or none matches;
//! 2. [`sign_in`]: the tracker account to close them as, on the sign-in page (URL mode), unless
//!    this caller signed in before;
//! 3. [`closing_comment`]: why, when more than three are closed;
//! 4. [`confirm_close`]: "Close #101, #102, #104 in acme/app as alice?", naming the answers.
//!
//! Each reads what it needs (the tool's arguments, the earlier answers, the tracker) and asks
//! only when it must. A resolver that takes an earlier answer runs after it, and is declined
//! without asking when that answer was declined. Resolvers run again on each round of a
//! 2026-07-28 call, so they only read: closing happens in the tool.

use super::model::{Account, ClosingComment, PageBase, Tracker};
use mcp_resolve::elicit::Choices;
use mcp_resolve::prelude::*;

/// More picked issues than this need a closing comment.
pub(crate) const COMMENT_ABOVE: usize = 3;

/// The open issues of `repo` whose title contains `query`: none, the one that matches, or the
/// user's pick among those that do.
#[resolver]
pub(crate) async fn pick_issues(repo: String, query: String, tracker: State<Tracker>) -> Resolution<Vec<u32>> {
    let found = tracker.matching(&repo, &query);
    if found.len() < 2 {
        return Resolution::Value(found.iter().map(|i| i.id).collect());
    }
    let choices = found
        .iter()
        .fold(Choices::new("issues").title("Issues to close"), |c, i| {
            c.option(i.id.to_string(), format!("#{} {}", i.id, i.title), i.id)
        });
    Elicit::pick_many(
        format!(
            "{} open issues of {repo} match \"{query}\". Which should be closed?",
            found.len()
        ),
        choices.min_items(1),
    )
    .into()
}

/// The tracker account to close the issues as: the one this caller signed in as before, or a
/// sign-in on this server's page (URL mode: the tracker's credentials never pass the client).
/// Nothing when nothing is to be closed.
#[resolver]
pub(crate) async fn sign_in(
    #[resolve(pick_issues)] ids: Vec<u32>,
    tracker: State<Tracker>,
    base: State<PageBase>,
    cx: Context,
) -> Resolution<Option<Account>> {
    if ids.is_empty() {
        return Resolution::Value(None);
    }
    if let Some(account) = tracker.account_of(Tracker::caller(cx.principal())) {
        return Resolution::Value(Some(Account { account }));
    }
    Elicit::url(
        "Sign in to the issue tracker to close issues: open the page",
        format!("{}/sign-in", base.0),
    )
    .optional()
}

/// Why the issues are closed, asked only when more than [`COMMENT_ABOVE`] are picked.
#[resolver]
pub(crate) async fn closing_comment(#[resolve(pick_issues)] ids: Vec<u32>) -> Resolution<Option<ClosingComment>> {
    if ids.len() <= COMMENT_ABOVE {
        return Resolution::Value(None);
    }
    Elicit::form(format!("Closing {} issues: leave a comment saying why", ids.len())).optional()
}

/// The last word, naming what the earlier answers chose; nothing to confirm when nothing is to be
/// closed.
#[resolver]
pub(crate) async fn confirm_close(
    repo: String,
    #[resolve(pick_issues)] ids: Vec<u32>,
    #[resolve(sign_in)] account: Option<Account>,
    #[resolve(closing_comment)] comment: Option<ClosingComment>,
) -> Resolution<Confirm> {
    let Some(Account { account }) = account else {
        return Resolution::Value(Confirm { ok: true });
    };
    let ids: Vec<String> = ids.iter().map(|id| format!("#{id}")).collect();
    let with = comment.map_or_else(String::new, |c| format!(" with the comment \"{}\"", c.comment));
    Elicit::form(format!("Close {} in {repo} as {account}{with}?", ids.join(", "))).into()
}
