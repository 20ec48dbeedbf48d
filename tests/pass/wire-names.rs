//! A resolver names a renamed argument by its wire name, and may carry lint attributes, which
//! hold for every function generated from it (no warning is left).
#![deny(warnings)]
use mcp_resolve::prelude::*;

#[resolver]
async fn confirm_delete(
    #[allow(non_snake_case)] folderPath: String,
    #[allow(unused_variables)] force: bool,
) -> Resolution<Confirm> {
    Elicit::form(format!("delete {folderPath}?")).into()
}

#[tool]
async fn delete_folder(
    #[arg(rename = "folderPath")] path: String,
    force: bool,
    #[confirm("Really delete {folderPath}?")] sure: bool,
    #[resolve(confirm_delete)] ok: bool,
) -> String {
    format!("{path} {force} {sure} {ok}")
}

fn main() {
    let server = Server::new("wire").tool(delete_folder);
    let schema = &server.tools()[0].input_schema;
    assert!(schema["properties"].get("folderPath").is_some(), "{schema:?}");
}
