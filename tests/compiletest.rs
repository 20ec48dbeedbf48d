//! trybuild UI tests: the `#[tool]`, `#[prompt]`, `#[resource]`, `#[derive(FormSchema)]` and
//! `#[resolver]` misuses in `tests/ui/<macro>/`, the deprecated root paths in `tests/ui/moved/`,
//! and the expansion smoke tests in `tests/pass/`. The `.stderr` files are rustc's exact output,
//! so they belong to one toolchain; regenerate with
//! `TRYBUILD=overwrite cargo test --test compiletest` and review the diff.

#[test]
#[cfg_attr(miri, ignore)]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/tool/*.rs");
    t.compile_fail("tests/ui/form_schema/*.rs");
    t.compile_fail("tests/ui/resolver/*.rs");
    t.compile_fail("tests/ui/prompt/*.rs");
    t.compile_fail("tests/ui/resource/*.rs");
    t.compile_fail("tests/ui/moved/*.rs");
    t.pass("tests/pass/*.rs");
}
