//! The README's "Guides" list reaches every page under `docs/` in one click, so the README's
//! table of contents reaches every guide in two (issue 28's acceptance). A page added to `docs/`
//! without a line in that list fails here, naming the page; so does a link in the list to a page
//! that does not exist.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::path::Path;

const MANIFEST_DIR: &str = env!("CARGO_MANIFEST_DIR");

/// The README's `## Guides` section: from its heading to the next `## ` heading.
fn guides_section(readme: &str) -> &str {
    let start = readme
        .find("\n## Guides\n")
        .expect("README.md has a `## Guides` section")
        + 1;
    let rest = &readme[start + "## Guides\n".len()..];
    let end = rest.find("\n## ").map_or(rest.len(), |i| i + 1);
    &rest[..end]
}

/// The targets of the Markdown links `[text](target)` in `text`, without a `#fragment`.
fn link_targets(text: &str) -> BTreeSet<String> {
    let mut targets = BTreeSet::new();
    for (at, _) in text.match_indices("](") {
        let rest = &text[at + 2..];
        let Some(end) = rest.find(')') else { continue };
        let target = &rest[..end];
        let target = target.split_once('#').map_or(target, |(path, _)| path);
        if !target.is_empty() {
            targets.insert(target.to_owned());
        }
    }
    targets
}

/// Every `docs/*.md` page, as the README links it (`docs/NAME.md`).
fn docs_pages() -> BTreeSet<String> {
    std::fs::read_dir(Path::new(MANIFEST_DIR).join("docs"))
        .expect("docs/ is readable")
        .map(|entry| entry.expect("a docs/ entry").path())
        .filter(|path| path.is_file() && path.extension().is_some_and(|e| e == "md"))
        .map(|path| format!("docs/{}", path.file_name().unwrap().to_str().expect("a UTF-8 name")))
        .collect()
}

#[test]
fn the_readme_guides_list_links_every_docs_page() {
    let readme = std::fs::read_to_string(Path::new(MANIFEST_DIR).join("README.md")).expect("README.md is readable");
    let linked = link_targets(guides_section(&readme));
    let pages = docs_pages();
    assert!(pages.contains("docs/asking-well.md"), "docs/ was read: {pages:?}");

    let missing: Vec<&String> = pages.difference(&linked).collect();
    assert!(
        missing.is_empty(),
        "README.md's \"Guides\" list does not link {missing:?}: add a line for each, so every guide is one click from the top"
    );
    let dead: Vec<&String> = linked
        .iter()
        .filter(|target| !target.contains("://") && !Path::new(MANIFEST_DIR).join(target).is_file())
        .collect();
    assert!(
        dead.is_empty(),
        "README.md's \"Guides\" list links pages that do not exist: {dead:?}"
    );
}

/// The helpers find what they should: a page missing from a list, and a fragment dropped.
#[test]
fn the_section_and_its_links_are_read_as_written() {
    let readme = "# x\n\n## Guides\n\n- [A](docs/a.md), [B](docs/b.md#part)\n\n## Next\n\n[C](docs/c.md)\n";
    let linked = link_targets(guides_section(readme));
    assert_eq!(linked, BTreeSet::from(["docs/a.md".to_owned(), "docs/b.md".to_owned()]));
}
