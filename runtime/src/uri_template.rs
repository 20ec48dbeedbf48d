//! URI templates as MCP resource templates use them (RFC 6570): parsing, with the operators a
//! template may use checked, and matching a URI against a template, with its values
//! percent-decoded. Nothing here knows of MCP; `resource.rs` names the type in its public API.

/// A URI template as resource templates use it (RFC 6570): literal text and variables,
/// `{name}` (one value without `/`, `?` or `#`), `{+name}` (reserved expansion: any characters,
/// `/` included, as in `file:///{+path}`) and `{/name}` (one path segment, with its leading
/// `/`). Values are percent-decoded (`%2F` is `/`, `%20` a space); a value that does not decode
/// to UTF-8 does not match. Two variables never touch (`{a}{b}` is refused; `{a}{/b}` is fine,
/// its `/` separates them) and nothing follows a `{+name}` but literal text, so a URI matches at
/// most one way.
///
/// ```
/// use mcp_resolve_runtime::resource::UriTemplate;
/// let t = UriTemplate::parse("test://template/{id}/data").unwrap();
/// assert_eq!(t.variables().collect::<Vec<_>>(), ["id"]);
/// assert_eq!(t.matches("test://template/123/data"), Some(vec![("id".to_string(), "123".to_string())]));
/// assert_eq!(t.matches("test://template//data"), None);
/// assert_eq!(t.matches("test://template/1/2/data"), None);
///
/// // A repository named `owner/name`, and a path of any depth:
/// let repo = UriTemplate::parse("issues://{+repo}/open").unwrap();
/// assert_eq!(repo.matches("issues://rust-lang/rust/open"), Some(vec![("repo".into(), "rust-lang/rust".into())]));
/// let file = UriTemplate::parse("file:///{+path}").unwrap();
/// assert_eq!(file.matches("file:///home/me/notes%20today.md"), Some(vec![("path".into(), "home/me/notes today.md".into())]));
/// let seg = UriTemplate::parse("notes://folders{/name}").unwrap();
/// assert_eq!(seg.matches("notes://folders/ideas"), Some(vec![("name".into(), "ideas".into())]));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UriTemplate {
    text: String,
    parts: Vec<Part>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Part {
    Literal(String),
    Variable(String, Op),
}

/// A variable's RFC 6570 operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    /// `{name}`: one value, no `/`, `?` or `#`.
    Simple,
    /// `{+name}`: reserved expansion, any characters.
    Reserved,
    /// `{/name}`: `/` and one path segment.
    Path,
}

impl UriTemplate {
    /// Parses a template: `{name}`, `{+name}` and `{/name}` variables (names of letters, digits
    /// and `_`); another operator, an unclosed brace, two touching variables, text-less
    /// neighbours of a `{+name}` or a repeated name is an error, as text.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut parts: Vec<Part> = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            match rest.find(['{', '}']) {
                None => {
                    parts.push(Part::Literal(rest.to_owned()));
                    rest = "";
                }
                Some(i) if rest.as_bytes()[i] == b'}' => {
                    return Err(format!("unmatched `}}` in the URI template `{text}`"));
                }
                Some(i) => {
                    if i > 0 {
                        parts.push(Part::Literal(rest[..i].to_owned()));
                    }
                    let after = &rest[i + 1..];
                    let Some(end) = after.find('}') else {
                        return Err(format!("unclosed `{{` in the URI template `{text}`"));
                    };
                    let inside = &after[..end];
                    let (op, name) = match inside.as_bytes().first() {
                        Some(b'+') => (Op::Reserved, &inside[1..]),
                        Some(b'/') => (Op::Path, &inside[1..]),
                        _ => (Op::Simple, inside),
                    };
                    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                        return Err(format!(
                            "`{{{inside}}}` is not a variable this server reads: write `{{name}}`, `{{+name}}` (reserved, may hold `/`) or `{{/name}}` (a path segment); names are letters, digits and `_`"
                        ));
                    }
                    match parts.last() {
                        Some(Part::Variable(_, Op::Reserved)) => {
                            return Err(format!(
                                "a variable follows `{{+…}}` in the URI template `{text}`: put literal text between them"
                            ));
                        }
                        Some(Part::Variable(..)) if op != Op::Path => {
                            return Err(format!(
                                "two variables touch in the URI template `{text}`: put literal text between them"
                            ));
                        }
                        _ => {}
                    }
                    if parts.iter().any(|p| matches!(p, Part::Variable(v, _) if v == name)) {
                        return Err(format!("variable `{{{name}}}` appears twice in the URI template"));
                    }
                    parts.push(Part::Variable(name.to_owned(), op));
                    rest = &after[end + 1..];
                }
            }
        }
        Ok(Self {
            text: text.to_owned(),
            parts,
        })
    }

    /// The template as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The variables' names, in order.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|p| match p {
            Part::Variable(v, _) => Some(v.as_str()),
            Part::Literal(_) => None,
        })
    }

    /// The variables' values when `uri` matches, in order, percent-decoded. Linear in the URI's
    /// length.
    pub fn matches(&self, uri: &str) -> Option<Vec<(String, String)>> {
        let mut rest = uri;
        let mut values = Vec::new();
        let mut parts = self.parts.iter().peekable();
        while let Some(part) = parts.next() {
            match part {
                Part::Literal(l) => rest = rest.strip_prefix(l.as_str())?,
                Part::Variable(name, op) => {
                    if *op == Op::Path {
                        rest = rest.strip_prefix('/')?;
                    }
                    let next = match parts.peek() {
                        Some(Part::Literal(l)) => Some(l.as_str()),
                        // A `{/name}` next: this value stops at its `/`.
                        Some(Part::Variable(_, Op::Path)) => Some("/"),
                        _ => None,
                    };
                    let end = match op {
                        // One character or more, up to the next literal's first occurrence after
                        // it (or the end): non-greedy.
                        Op::Reserved => match next {
                            Some(l) => {
                                let first = rest.chars().next()?.len_utf8();
                                rest[first..].find(l)? + first
                            }
                            None => rest.len(),
                        },
                        // Never past a `/`, `?` or `#`.
                        Op::Simple | Op::Path => {
                            let stop = rest.find(['/', '?', '#']).unwrap_or(rest.len());
                            match next {
                                Some(l) => rest[..stop].find(l).or_else(|| {
                                    // The literal may begin with the stop character itself.
                                    rest[stop..].starts_with(l).then_some(stop)
                                })?,
                                None => stop,
                            }
                        }
                    };
                    if end == 0 || (parts.peek().is_none() && end != rest.len()) {
                        return None;
                    }
                    let value = percent_encoding::percent_decode_str(&rest[..end]).decode_utf8().ok()?;
                    if value.is_empty() {
                        return None;
                    }
                    values.push((name.clone(), value.into_owned()));
                    rest = &rest[end..];
                }
            }
        }
        rest.is_empty().then_some(values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_parse_and_refuse_what_they_cannot_match() {
        for good in ["a/{b}/c", "a/{+b}", "a/{+b}/c", "a{/b}", "a/{b}{/c}", "a{/b}{/c}"] {
            assert!(UriTemplate::parse(good).is_ok(), "{good}");
        }
        for bad in [
            "a/{b",
            "a/}",
            "a/{}",
            "a/{b-c}",
            "a/{b}{c}",
            "{x}/{x}",
            "a/{#b}",
            "a/{?b}",
            "a/{.b}",
            "a/{+}",
            "a/{+b}{c}",
            "a/{+b}{/c}",
            "a/{b}{+c}",
            "a/{b*}",
        ] {
            assert!(UriTemplate::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn reserved_and_path_variables_match_and_values_are_decoded() {
        let repo = UriTemplate::parse("issues://{+repo}/open").unwrap();
        let one = |v: &str| Some(vec![("repo".to_string(), v.to_string())]);
        assert_eq!(repo.matches("issues://rust-lang/rust/open"), one("rust-lang/rust"));
        assert_eq!(repo.matches("issues://a/b/c/open"), one("a/b/c"));
        assert_eq!(
            repo.matches("issues:////open"),
            one("/"),
            "a `/` is a value of `{{+repo}}`"
        );
        assert_eq!(repo.matches("issues:///open"), None, "the value is never empty");
        assert_eq!(repo.matches("issues://open"), None);
        assert_eq!(repo.matches("issues://x/closed"), None);
        // Non-greedy: the first `/open` ends it, and the rest must then match.
        assert_eq!(repo.matches("issues://a/open/b/open"), None);
        let simple = UriTemplate::parse("issues://{repo}/open").unwrap();
        assert_eq!(simple.matches("issues://rust-lang%2Frust/open"), one("rust-lang/rust"));
        assert_eq!(simple.matches("issues://caf%C3%A9/open"), one("café"));
        assert_eq!(simple.matches("issues://%FF/open"), None, "not UTF-8");
        assert_eq!(simple.matches("issues://rust-lang/rust/open"), None);
        let path = UriTemplate::parse("notes://all{/folder}{/file}").unwrap();
        assert_eq!(
            path.matches("notes://all/ideas/garden.md"),
            Some(vec![
                ("folder".into(), "ideas".into()),
                ("file".into(), "garden.md".into())
            ])
        );
        assert_eq!(path.matches("notes://all/ideas"), None);
        assert_eq!(path.matches("notes://all/ideas/"), None);
        assert_eq!(path.matches("notes://allideas/x"), None);
        let mixed = UriTemplate::parse("t://{a}{/b}").unwrap();
        assert_eq!(
            mixed.matches("t://x/y"),
            Some(vec![("a".into(), "x".into()), ("b".into(), "y".into())])
        );
    }

    #[test]
    fn variables_match_one_segment_non_greedily() {
        let t = UriTemplate::parse("test://{a}/x/{b}.json").unwrap();
        assert_eq!(
            t.matches("test://one/x/two.json"),
            Some(vec![("a".into(), "one".into()), ("b".into(), "two".into())])
        );
        assert_eq!(t.matches("test://one/x/two.json/"), None);
        assert_eq!(t.matches("test:///x/two.json"), None);
        assert_eq!(t.matches("test://o/n/x/two.json"), None);
        let end = UriTemplate::parse("file:///{name}").unwrap();
        assert_eq!(
            end.matches("file:///a.txt"),
            Some(vec![("name".into(), "a.txt".into())])
        );
        assert_eq!(end.matches("file:///a/b"), None);
        assert_eq!(end.matches("file:///"), None);
        let plain = UriTemplate::parse("test://static").unwrap();
        assert_eq!(plain.matches("test://static"), Some(vec![]));
        assert_eq!(plain.matches("test://static2"), None);
    }
}
