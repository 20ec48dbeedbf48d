use mcp_resolve::prompt;

#[prompt]
async fn repeat(word: String, times: Option<u32>) -> String {
    word.repeat(times.unwrap_or(1) as usize)
}

fn main() {}
