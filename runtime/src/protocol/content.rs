//! Content the protocol carries in results: tool result items, prompt messages' speakers, and
//! resource contents. Tools, prompts and resources return them; the wire model encodes them.

use serde::{Deserialize, Serialize};

/// A resource embedded in a tool result.
///
/// ```
/// use mcp_resolve_runtime::tool::Content;
/// let c = Content::resource_text("file:///a.md", Some("text/markdown".into()), "# A");
/// assert_eq!(serde_json::to_value(&c).unwrap()["resource"]["mimeType"], "text/markdown");
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmbeddedResource {
    /// The resource's URI.
    pub uri: String,
    /// Its MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Text contents (exclusive with `blob`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Base64 contents (exclusive with `text`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
}

/// One content item of a tool result.
///
/// ```
/// use mcp_resolve_runtime::tool::Content;
/// let c = Content::text("hello");
/// assert_eq!(serde_json::to_value(&c).unwrap(), serde_json::json!({"type": "text", "text": "hello"}));
/// let i = Content::image("aGk=", "image/png");
/// assert_eq!(serde_json::to_value(&i).unwrap()["mimeType"], "image/png");
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
#[non_exhaustive]
pub enum Content {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64-encoded.
    #[serde(rename_all = "camelCase")]
    Image {
        /// Base64 data.
        data: String,
        /// e.g. `image/png`.
        mime_type: String,
    },
    /// Audio, base64-encoded.
    #[serde(rename_all = "camelCase")]
    Audio {
        /// Base64 data.
        data: String,
        /// e.g. `audio/wav`.
        mime_type: String,
    },
    /// An embedded resource.
    Resource {
        /// The resource.
        resource: EmbeddedResource,
    },
    /// A link to a resource the client may read (2025-06-18 on).
    #[serde(rename = "resource_link", rename_all = "camelCase")]
    ResourceLink {
        /// Its URI.
        uri: String,
        /// Its name.
        name: String,
        /// What it is.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        /// Its MIME type.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
    },
}

impl Content {
    /// A link to a resource.
    ///
    /// ```
    /// use mcp_resolve_runtime::protocol::Content;
    /// let c = Content::resource_link("notes://folder/drafts", "drafts");
    /// assert_eq!(
    ///     serde_json::to_value(&c).unwrap(),
    ///     serde_json::json!({"type": "resource_link", "uri": "notes://folder/drafts", "name": "drafts"})
    /// );
    /// ```
    pub fn resource_link(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Self::ResourceLink {
            uri: uri.into(),
            name: name.into(),
            description: None,
            mime_type: None,
        }
    }
    /// A text item.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into() }
    }
    /// An image item from base64 data.
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self::Image {
            data: data.into(),
            mime_type: mime_type.into(),
        }
    }
    /// An audio item from base64 data.
    pub fn audio(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self::Audio {
            data: data.into(),
            mime_type: mime_type.into(),
        }
    }
    /// An embedded text resource.
    pub fn resource_text(uri: impl Into<String>, mime_type: Option<String>, text: impl Into<String>) -> Self {
        Self::Resource {
            resource: EmbeddedResource {
                uri: uri.into(),
                mime_type,
                text: Some(text.into()),
                blob: None,
            },
        }
    }
}

/// Who speaks a prompt message.
///
/// ```
/// use mcp_resolve_runtime::prompt::Role;
/// assert_eq!(serde_json::to_value(Role::Assistant).unwrap(), "assistant");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user.
    User,
    /// The assistant.
    Assistant,
}

/// The contents of a resource, as `resources/read` returns them: the same shape as an
/// [`EmbeddedResource`] (`uri`, `mimeType`, and `text` or base64 `blob`).
pub type ResourceContents = EmbeddedResource;

/// The longest URI `resources/read` looks at; a longer one is refused with -32602.
///
/// ```
/// assert_eq!(mcp_resolve_runtime::resource::MAX_URI_BYTES, 8192);
/// ```
pub const MAX_URI_BYTES: usize = 8 * 1024;
