use mcp_resolve::prelude::*;

#[tool]
async fn search(query: String, #[cfg(feature = "pages")] page: u32) -> String {
    query
}

#[resolver]
async fn region(#[cfg_attr(test, allow(unused))] query: String) -> Resolution<String> {
    Resolution::Value(query)
}

#[prompt]
async fn brief(#[cfg(any())] topic: String) -> String {
    "brief".into()
}

fn main() {}
