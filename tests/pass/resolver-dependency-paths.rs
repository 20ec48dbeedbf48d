//! A resolver names its dependency the ways Rust names a function: by a plain name, a `use`
//! alias, `self::`, `super::` and `crate::` paths, and inside a function body.

mod resolvers {
    use mcp_resolve::prelude::*;

    #[resolver]
    pub async fn base(n: u32) -> Resolution<u32> {
        Resolution::Value(n + 1)
    }

    pub mod deeper {
        use super::base as renamed;
        use mcp_resolve::prelude::*;

        #[resolver]
        pub async fn by_alias(#[resolve(renamed)] b: u32) -> Resolution<u32> {
            Resolution::Value(b * 10)
        }

        #[resolver]
        pub async fn by_super(#[resolve(super::base)] b: u32) -> Resolution<u32> {
            Resolution::Value(b * 100)
        }

        #[resolver]
        pub async fn by_self(#[resolve(self::by_alias)] b: u32) -> Resolution<u32> {
            Resolution::Value(b + 5)
        }

        #[resolver]
        pub async fn by_crate(#[resolve(crate::resolvers::deeper::by_super)] b: u32) -> Resolution<u32> {
            Resolution::Value(b + 7)
        }
    }
}

mod tools {
    use crate::resolvers::deeper::{by_crate, by_self};
    use mcp_resolve::prelude::*;

    #[tool]
    pub async fn sum(n: u32, #[resolve(by_self)] a: u32, #[resolve(by_crate)] b: u32) -> String {
        format!("{n} {a} {b}")
    }
}

fn main() {
    use mcp_resolve::prelude::*;
    use mcp_resolve::testing::TestClient;

    // Resolvers and a tool inside a function body.
    #[resolver]
    async fn local_base(n: u32) -> Resolution<u32> {
        Resolution::Value(n * 2)
    }
    #[resolver]
    async fn local_dep(#[resolve(local_base)] b: u32) -> Resolution<u32> {
        Resolution::Value(b + 1)
    }
    #[tool]
    async fn local(n: u32, #[resolve(local_dep)] d: u32) -> String {
        format!("{n} {d}")
    }

    let server = Server::new("paths").tool(tools::sum).tool(local);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut c = TestClient::stateless(server, serde_json::json!({}));
        let r = c.call_tool("sum", serde_json::json!({"n": 1})).await;
        assert_eq!(r["result"]["content"][0]["text"], "1 25 207", "{r}");
        let r = c.call_tool("local", serde_json::json!({"n": 3})).await;
        assert_eq!(r["result"]["content"][0]["text"], "3 7", "{r}");
    });
}
