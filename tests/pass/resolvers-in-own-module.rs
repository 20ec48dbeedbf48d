//! A `model` / `resolvers` / `tools` layout: the tools' module imports only the resolver it names
//! (one plain `use`), not the resolver's dependencies, parameter types or state type.

mod model {
    /// The tracker the resolvers read: application state.
    pub struct Tracker {
        pub open: Vec<u64>,
    }

    /// How many issues a search may return: a tool argument of the author's own type.
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    pub struct Limit(pub usize);
}

mod resolvers {
    use crate::model::{Limit, Tracker};
    use mcp_resolve::prelude::*;

    /// The open issues matching the query, at most `limit`: asks nothing.
    #[resolver]
    pub async fn matching(query: String, limit: Limit, tracker: State<Tracker>) -> Resolution<Vec<u64>> {
        let found = tracker
            .open
            .iter()
            .copied()
            .filter(|n| n.to_string().contains(query.as_str()))
            .take(limit.0);
        Resolution::Value(found.collect())
    }

    /// Confirms closing what matched; depends on `matching`, which the tools never import.
    #[resolver]
    pub async fn sure(#[resolve(matching)] found: Vec<u64>) -> Resolution<Confirm> {
        Elicit::form(format!("Close {} issues?", found.len())).into()
    }
}

mod tools {
    use crate::resolvers::sure;
    use mcp_resolve::prelude::*;

    /// Closes the matching issues once confirmed.
    #[tool]
    pub async fn close_issues(query: String, limit: crate::model::Limit, #[resolve(sure)] ok: Confirm) -> String {
        format!("{query} (≤ {}): {}", limit.0, ok.ok)
    }
}

fn main() {
    use mcp_resolve::prelude::*;
    use mcp_resolve::testing::TestClient;

    let server = Server::new("triage")
        .state(model::Tracker { open: vec![101, 102, 201] })
        .tool(tools::close_issues);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut c = TestClient::stateless(server, serde_json::json!({"elicitation": {"form": {}}}));
        let r = c
            .call_tool("close_issues", serde_json::json!({"query": "10", "limit": 5}))
            .await;
        let requests = r["result"]["inputRequests"].as_object().unwrap();
        assert_eq!(requests.keys().collect::<Vec<_>>(), ["sure"]);
        assert_eq!(requests["sure"]["params"]["message"], "Close 2 issues?");
    });
}
