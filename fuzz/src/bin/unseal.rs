//! AFL++ entry of the `unseal` target (see `src/lib.rs`): `./run.sh unseal SECONDS`.

fn main() {
    afl::fuzz!(|data: &[u8]| mcp_resolve_fuzz::unseal(data));
}
