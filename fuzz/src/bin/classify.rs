//! AFL++ entry of the `classify` target (see `src/lib.rs`): `./run.sh classify SECONDS`.

fn main() {
    afl::fuzz!(|data: &[u8]| mcp_resolve_fuzz::classify(data));
}
