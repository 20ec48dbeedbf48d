//! URI templates as `#[resource(template = "…")]` takes them: RFC 6570 `{name}`, `{+name}`
//! and `{/name}`.

/// The variable names of a URI template, or what is wrong with it: `{name}`, `{+name}` (reserved
/// expansion, may hold `/`) and `{/name}` (a path segment). The runtime's `UriTemplate::parse`
/// reads the same grammar when the resource is registered.
pub(super) fn template_variables(template: &str) -> Result<Vec<String>, String> {
    #[derive(PartialEq)]
    enum Last {
        Text,
        Var,
        Reserved,
    }
    let mut names: Vec<String> = Vec::new();
    let mut rest = template;
    let mut last = Last::Text;
    while let Some(i) = rest.find(['{', '}']) {
        if rest.as_bytes()[i] == b'}' {
            return Err("unmatched `}` in the URI template: write `{name}`, `{+name}` or `{/name}`".into());
        }
        if i > 0 {
            last = Last::Text;
        }
        let after = &rest[i + 1..];
        let Some(end) = after.find('}') else {
            return Err("unclosed `{` in the URI template: write `{name}`".into());
        };
        let inside = &after[..end];
        let (op, name) = match inside.as_bytes().first() {
            Some(b'+') => ('+', &inside[1..]),
            Some(b'/') => ('/', &inside[1..]),
            _ => (' ', inside),
        };
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!(
                "`{{{inside}}}` is not supported: write `{{name}}` (one value without `/`), `{{+name}}` (reserved expansion, may hold `/`) or `{{/name}}` (a path segment); names are letters, digits and `_`"
            ));
        }
        match last {
            Last::Reserved => {
                return Err(format!(
                    "`{{{inside}}}` follows a `{{+…}}` variable, which would take it: put literal text (e.g. `/`) between them"
                ));
            }
            Last::Var if op != '/' => {
                return Err("two variables touch in the URI template: put literal text (e.g. `/`) between them".into());
            }
            _ => {}
        }
        if names.iter().any(|n| n == name) {
            return Err(format!(
                "`{{{name}}}` appears twice in the URI template: name each variable once"
            ));
        }
        names.push(name.to_owned());
        last = if op == '+' { Last::Reserved } else { Last::Var };
        rest = &after[end + 1..];
    }
    if names.is_empty() {
        return Err("this template has no `{variable}`: use `uri = \"…\"` for a static resource".into());
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::template_variables;

    #[test]
    fn template_variables_are_the_operators_the_runtime_matches() {
        assert_eq!(template_variables("test://t/{id}/data").unwrap(), ["id"]);
        assert_eq!(template_variables("a/{x}/b/{y}").unwrap(), ["x", "y"]);
        assert_eq!(template_variables("issues://{+repo}/open").unwrap(), ["repo"]);
        assert_eq!(
            template_variables("notes://all{/folder}{/file}").unwrap(),
            ["folder", "file"]
        );
        assert_eq!(template_variables("t://{a}{/b}").unwrap(), ["a", "b"]);
        for bad in [
            "a/{x",
            "a/}",
            "a/{}",
            "a/{+}",
            "a/{#x}",
            "a/{?x}",
            "a/{x*}",
            "a/{x}{y}",
            "a/{+x}{y}",
            "a/{+x}{/y}",
            "a/{x}/{x}",
            "a/b",
        ] {
            assert!(template_variables(bad).is_err(), "{bad}");
        }
    }
}
