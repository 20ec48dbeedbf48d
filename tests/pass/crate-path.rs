use ::mcp_resolve::{Server, tool};

// A local module with the facade's name must not confuse the absolute path.
#[allow(dead_code)]
mod mcp_resolve {}

/// Add two integers.
#[tool(crate = "::mcp_resolve")]
async fn add(a: i64, b: i64) -> String {
    (a + b).to_string()
}

mod renamed {
    pub(crate) use ::mcp_resolve as mcp;
}

/// Subtract two integers.
#[tool(crate = "renamed::mcp")]
async fn sub(a: i64, b: i64) -> String {
    (a - b).to_string()
}

fn main() {
    let server = Server::new("krate").tool(add).tool(sub);
    let names: Vec<&str> = server.tools().iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["add", "sub"]);
    assert_eq!(
        server.tools()[0].input_schema["required"],
        serde_json::json!(["a", "b"])
    );

    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    assert_eq!(rt.block_on(add(1, 2)), "3");
    assert_eq!(rt.block_on(sub(1, 2)), "-1");
}
