use mcp_resolve::prelude::*;
use std::rc::Rc;

#[tool]
async fn count(counter: State<Rc<u32>>) -> String {
    counter.to_string()
}

fn main() {}
