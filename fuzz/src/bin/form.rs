//! AFL++ entry of the `form` target (see `src/lib.rs`): `./run.sh form SECONDS`.

fn main() {
    afl::fuzz!(|data: &[u8]| mcp_resolve_fuzz::form(data));
}
