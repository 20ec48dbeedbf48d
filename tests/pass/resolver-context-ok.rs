use mcp_resolve::prelude::*;
use mcp_resolve::testing::TestClient;

/// Asked first: is the folder really the one to delete?
#[resolver]
async fn ask_sure(path: String) -> Resolution<Confirm> {
    Elicit::form(format!("Delete {path}?")).into()
}

/// Takes the context, a tool argument and a dependency; asks nothing.
#[resolver]
async fn confirm_delete(cx: Context, path: String, #[resolve(ask_sure)] sure: Confirm) -> Resolution<Confirm> {
    let _ = cx.era();
    Resolution::Value(Confirm {
        ok: sure.ok && !path.is_empty(),
    })
}

#[tool]
async fn delete_folder(path: String, #[resolve(confirm_delete)] ok: bool) -> String {
    format!("{path}: {ok}")
}

fn main() {
    let server = Server::new("resolvers").tool(delete_folder);
    let schema = &server.tools()[0].input_schema;
    // The resolved parameter is not an argument: only `path` is in the schema.
    assert_eq!(schema["required"], serde_json::json!(["path"]));
    assert_eq!(schema["properties"].as_object().unwrap().len(), 1);

    // The dependency's question is asked first, under its own key.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut c = TestClient::stateless(server, serde_json::json!({"elicitation": {"form": {}}}));
        let r = c
            .call_tool("delete_folder", serde_json::json!({"path": "/tmp/x"}))
            .await;
        let requests = r["result"]["inputRequests"].as_object().unwrap();
        assert_eq!(requests.keys().collect::<Vec<_>>(), ["ask_sure"]);
        assert_eq!(requests["ask_sure"]["params"]["message"], "Delete /tmp/x?");
    });
}
