//! AFL++ entry of the `http` target (see `src/lib.rs`): `./run.sh http SECONDS`.

fn main() {
    afl::fuzz!(|data: &[u8]| mcp_resolve_fuzz::http(data));
}
