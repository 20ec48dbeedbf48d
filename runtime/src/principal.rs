//! Who calls: the authenticated caller a transport names, which sessions, sealed state, URL flows
//! and scopes are bound to.

/// An authenticated caller. There is none on stdio; HTTP transports fill it from a verified token.
///
/// Two principals are the same caller when their subject and issuer match
/// ([`Principal::same_caller`]): sessions and sealed `requestState` are bound to that pair, so a
/// client whose token is refreshed with other scopes keeps its session.
///
/// ```
/// use mcp_resolve_runtime::Principal;
/// let p = Principal {
///     subject: "user-42".into(),
///     issuer: Some("https://auth.example".into()),
///     scopes: vec!["notes:write".into()],
/// };
/// assert_eq!(p.subject, "user-42");
/// assert!(p.has_scope("notes:write"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Principal {
    /// The subject (`sub`).
    pub subject: String,
    /// The issuer (`iss`), when known.
    pub issuer: Option<String>,
    /// The scopes the token grants (the `scope` claim, space-separated, or `scp`).
    pub scopes: Vec<String>,
}

impl Principal {
    /// A caller with this subject, no issuer and no scopes (e.g. the user a page signed in).
    ///
    /// ```
    /// use mcp_resolve_runtime::Principal;
    /// assert_eq!(Principal::new("alice").subject, "alice");
    /// ```
    pub fn new(subject: impl Into<String>) -> Self {
        Self {
            subject: subject.into(),
            issuer: None,
            scopes: Vec::new(),
        }
    }
    /// Whether the token grants `scope`.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }
    /// Whether `other` is the same caller: the same subject from the same issuer, whatever scopes
    /// each token grants.
    ///
    /// ```
    /// use mcp_resolve_runtime::Principal;
    /// let a = Principal { subject: "alice".into(), issuer: None, scopes: vec![] };
    /// let b = Principal { scopes: vec!["admin".into()], ..a.clone() };
    /// assert!(a.same_caller(&b));
    /// ```
    pub fn same_caller(&self, other: &Principal) -> bool {
        self.subject == other.subject && self.issuer == other.issuer
    }
}
