//! `#[tool(...)]` options.

use crate::util::attr_fn::{AsWritten, Flag, Options};
use darling::FromMeta;
use darling::util::SpannedValue;

/// The options of `#[tool(...)]`.
#[derive(Debug, Default, FromMeta)]
#[darling(default)]
pub(crate) struct ToolArgs {
    /// The tool's wire name; defaults to the function's name.
    pub(crate) name: Option<SpannedValue<String>>,
    /// A human-readable title.
    pub(crate) title: Option<String>,
    /// A description; defaults to the doc comment.
    pub(crate) description: Option<String>,
    /// Path of the facade crate in generated code; defaults to `::mcp_resolve`.
    #[darling(rename = "crate")]
    pub(crate) krate: Option<syn::Path>,
    /// `readOnlyHint`.
    pub(crate) read_only: Option<bool>,
    /// `destructiveHint`.
    pub(crate) destructive: Option<bool>,
    /// `idempotentHint`.
    pub(crate) idempotent: Option<bool>,
    /// `openWorldHint`.
    pub(crate) open_world: Option<bool>,
    /// `replayable`: a destructive tool's answers may be replayed (opts out of single use);
    /// checked by `validate::replayable`.
    pub(crate) replayable: Option<Flag>,
    /// OAuth scopes a caller's token must grant: `scopes = ["notes:write"]`. Checked by
    /// `item::scopes`, which reports anything but a list of scope tokens at its token.
    pub(crate) scopes: Option<AsWritten>,
    /// `task = "optional" | "required" | "forbidden"`: whether a call runs as a task; checked by
    /// `validate::task_support`.
    pub(crate) task: Option<AsWritten>,
}

impl Options for ToolArgs {
    fn krate(&self) -> Option<&syn::Path> {
        self.krate.as_ref()
    }
}
