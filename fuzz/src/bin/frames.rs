//! AFL++ entry of the `frames` target (see `src/lib.rs`): `./run.sh frames SECONDS`.

fn main() {
    afl::fuzz!(|data: &[u8]| mcp_resolve_fuzz::frames(data));
}
