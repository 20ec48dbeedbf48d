use mcp_resolve::prompt;

#[prompt]
async fn repeat(word: String, times: u32) -> String {
    word.repeat(times as usize)
}

fn main() {}
