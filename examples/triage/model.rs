//! What the triage server works on: the issue tracker (its application state), the address its
//! sign-in page is reached at, and the forms and answers its questions use.

use mcp_resolve::Principal;
use mcp_resolve::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Mutex;

/// One issue of the tracker.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct Issue {
    pub(crate) id: u32,
    pub(crate) title: String,
    pub(crate) open: bool,
    /// Comments, oldest first (a closing comment is the last one).
    pub(crate) comments: Vec<String>,
    /// Who closed it, once closed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) closed_by: Option<String>,
}

/// The issue tracker: repositories (`owner/name`) and their issues, and who is signed in to it.
///
/// Application state, registered once with `Server::state(Tracker::sample())` and taken as
/// `State<Tracker>` by the resolvers, the tools, the prompt, the resource and the sign-in page.
/// A real server holds an API client here; each test builds its own.
#[derive(Debug, Default)]
pub(crate) struct Tracker {
    repos: Mutex<BTreeMap<String, Vec<Issue>>>,
    /// Tracker accounts by the caller they were signed in for (the caller's subject; empty for a
    /// caller with no identity, such as the one user of a stdio server). The tracker's
    /// credentials would be kept here too, on the server, never in a form or the model's context.
    sessions: Mutex<BTreeMap<String, String>>,
}

impl Tracker {
    /// A tracker with two repositories: `acme/app` with five open crash reports (and a feature
    /// request), `acme/site` with one open issue.
    pub(crate) fn sample() -> Self {
        let issue = |id, title: &str| Issue {
            id,
            title: title.to_owned(),
            open: true,
            comments: Vec::new(),
            closed_by: None,
        };
        Self::with(BTreeMap::from([
            (
                "acme/app".to_owned(),
                vec![
                    issue(101, "crash on start"),
                    issue(102, "crash when saving"),
                    issue(103, "dark mode"),
                    issue(104, "crash on exit"),
                    issue(105, "crash after update"),
                    issue(106, "crash in settings"),
                ],
            ),
            ("acme/site".to_owned(), vec![issue(7, "broken link on the home page")]),
        ]))
    }

    /// A tracker holding these repositories.
    pub(crate) fn with(repos: BTreeMap<String, Vec<Issue>>) -> Self {
        Self {
            repos: Mutex::new(repos),
            sessions: Mutex::default(),
        }
    }

    /// The repositories' names.
    pub(crate) fn repos(&self) -> Vec<String> {
        self.repos
            .lock()
            .map(|r| r.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// The open issues of `repo` (`None`: no such repository).
    pub(crate) fn open_issues(&self, repo: &str) -> Option<Vec<Issue>> {
        let repos = self.repos.lock().ok()?;
        Some(repos.get(repo)?.iter().filter(|i| i.open).cloned().collect())
    }

    /// The open issues of `repo` whose title contains `query` (any case).
    pub(crate) fn matching(&self, repo: &str, query: &str) -> Vec<Issue> {
        let query = query.to_lowercase();
        let mut found = self.open_issues(repo).unwrap_or_default();
        found.retain(|i| i.title.to_lowercase().contains(&query));
        found
    }

    /// Closes the open issues `ids` of `repo` as `account`, with `comment` on each; the ids
    /// actually closed (an issue closed meanwhile is left alone).
    pub(crate) fn close(&self, repo: &str, ids: &[u32], comment: Option<&str>, account: &str) -> Vec<u32> {
        let Ok(mut repos) = self.repos.lock() else {
            return Vec::new();
        };
        let Some(issues) = repos.get_mut(repo) else {
            return Vec::new();
        };
        let mut closed = Vec::new();
        for issue in issues.iter_mut().filter(|i| i.open && ids.contains(&i.id)) {
            issue.open = false;
            issue.closed_by = Some(account.to_owned());
            if let Some(comment) = comment {
                issue.comments.push(comment.to_owned());
            }
            closed.push(issue.id);
        }
        closed
    }

    /// The issue `id` of `repo`, open or closed (the tests read what the tool did).
    #[allow(dead_code)]
    pub(crate) fn issue(&self, repo: &str, id: u32) -> Option<Issue> {
        let repos = self.repos.lock().ok()?;
        repos.get(repo)?.iter().find(|i| i.id == id).cloned()
    }

    /// The tracker account signed in for `caller` (see [`Tracker::caller`]).
    pub(crate) fn account_of(&self, caller: &str) -> Option<String> {
        self.sessions.lock().ok()?.get(caller).cloned()
    }

    /// Records that `caller` signed in to the tracker as `account` (the sign-in page does).
    pub(crate) fn sign_in(&self, caller: &str, account: &str) {
        if let Ok(mut sessions) = self.sessions.lock() {
            sessions.insert(caller.to_owned(), account.to_owned());
        }
    }

    /// Who a session belongs to: the caller's subject, or `""` for a caller with no identity.
    pub(crate) fn caller(principal: Option<&Principal>) -> &str {
        principal.map_or("", |p| p.subject.as_str())
    }
}

/// Where users reach this server's sign-in page (`http://127.0.0.1:PORT`): application state the
/// sign-in resolver builds the page's URL from, and the one origin whose posts the page takes.
#[derive(Clone, Debug)]
pub(crate) struct PageBase(pub(crate) String);

/// What the sign-in page records: the tracker account the user signed in as.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Account {
    pub(crate) account: String,
}

/// Why the issues are closed, asked when more than three are.
#[derive(Clone, Debug, FormSchema)]
#[form(title = "Closing comment")]
pub(crate) struct ClosingComment {
    /// A comment left on every issue closed, e.g. "duplicate of #100".
    #[form(min_length = 3, max_length = 500)]
    pub(crate) comment: String,
}
