use mcp_resolve::prelude::*;

/// Single-use: a call that reaches it consumes each `requestState` it opens.
#[resolver(once, key = "approval")]
async fn approve(amount: u32) -> Elicit<Confirm> {
    Elicit::form(format!("Transfer {amount}?"))
}

#[tool]
async fn transfer(amount: u32, #[resolve(approve)] ok: bool) -> String {
    format!("{amount} {ok}")
}

/// Destructive and asking: single-use by default, opted out here.
#[tool(destructive = true, replayable)]
async fn rebuild(path: String, #[confirm("Rebuild {path}?")] ok: bool) -> String {
    format!("{path} {ok}")
}

/// Destructive and asking: single-use.
#[tool(destructive = true)]
async fn wipe(path: String, #[confirm("Wipe {path}?")] ok: bool) -> String {
    format!("{path} {ok}")
}

fn main() {
    let server = Server::new("single-use").tool(transfer).tool(rebuild).tool(wipe);
    let [plain, opted_out, destructive] = server.tools() else {
        panic!("three tools")
    };
    assert!(!plain.replayable && opted_out.replayable && !destructive.replayable);
    assert_eq!(destructive.annotations.destructive_hint, Some(true));
}
