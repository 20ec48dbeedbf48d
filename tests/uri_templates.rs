//! URI templates as MCP clients send them: `{+name}` holds `/` (`owner/name`), `{/name}` is a
//! path segment, values are percent-decoded, and a resource says "not found" with a typed error
//! (-32002 on the handshake era, -32602 on 2026-07-28, `data.uri` on both), not -32603.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use mcp_resolve::prelude::*;
use mcp_resolve::protocol::ProtocolVersion;
use mcp_resolve::resource::NotFound;
use mcp_resolve::testing::TestClient;
use serde_json::{Value, json};

/// The open issues of a repository (`owner/name`).
#[resource(template = "issues://{+repo}/open", mime_type = "text/plain")]
async fn open_issues(repo: String) -> Result<String, NotFound> {
    match repo.as_str() {
        "rust-lang/rust" => Ok("#101 crash".into()),
        "my org/notes" => Ok("#7 typo".into()),
        _ => Err(NotFound),
    }
}

/// One file of a folder.
#[resource(template = "notes://all{/folder}{/file}")]
async fn note(folder: String, file: String) -> String {
    format!("{folder}: {file}")
}

/// A read that fails for another reason.
#[resource(template = "broken://{name}")]
async fn broken(name: String) -> Result<String, String> {
    Err(format!("the store is down ({name})"))
}

fn server() -> Server {
    Server::new("templates")
        .resource(open_issues)
        .resource(note)
        .resource(broken)
}

async fn read(era: ProtocolVersion, uri: &str) -> Value {
    let params = json!({"uri": uri});
    if era == ProtocolVersion::V2026_07_28 {
        TestClient::stateless(server(), json!({}))
            .request("resources/read", params)
            .await
    } else {
        TestClient::handshake(server(), era, json!({}))
            .await
            .request("resources/read", params)
            .await
    }
}

#[tokio::test]
async fn reserved_and_path_variables_match_and_values_are_decoded_on_both_eras() {
    for era in [ProtocolVersion::V2026_07_28, ProtocolVersion::V2025_11_25] {
        let r = read(era, "issues://rust-lang/rust/open").await;
        assert_eq!(r["result"]["contents"][0]["text"], "#101 crash", "{r}");
        let r = read(era, "issues://my%20org/notes/open").await;
        assert_eq!(r["result"]["contents"][0]["text"], "#7 typo", "{r}");
        let r = read(era, "notes://all/ideas/garden%2Emd").await;
        assert_eq!(r["result"]["contents"][0]["text"], "ideas: garden.md", "{r}");
    }
}

#[tokio::test]
async fn not_found_is_the_protocols_not_found_and_other_errors_are_internal() {
    for (era, code) in [
        (ProtocolVersion::V2026_07_28, -32602),
        (ProtocolVersion::V2025_11_25, -32002),
    ] {
        let r = read(era, "issues://nobody/nothing/open").await;
        assert_eq!(r["error"]["code"], code, "{r}");
        assert_eq!(r["error"]["data"]["uri"], "issues://nobody/nothing/open", "{r}");
        let r = read(era, "broken://x").await;
        assert_eq!(r["error"]["code"], -32603, "{r}");
        // A URI no template matches is not found too (a path segment cannot hold `/`).
        let r = read(era, "notes://all/ideas").await;
        assert_eq!(r["error"]["code"], code, "{r}");
    }
}
