//! URI templates as `#[resource(template = "…")]` takes them: RFC 6570 level 1.

/// The `{var}` names of a URI template (RFC 6570 level 1), or what is wrong with it. The runtime's
/// `UriTemplate::parse` reads the same grammar when the resource is registered.
pub(super) fn template_variables(template: &str) -> Result<Vec<String>, String> {
    let mut names: Vec<String> = Vec::new();
    let mut rest = template;
    let mut last_was_var = false;
    while let Some(i) = rest.find(['{', '}']) {
        if rest.as_bytes()[i] == b'}' {
            return Err("unmatched `}` in the URI template: only `{name}` variables are supported".into());
        }
        if i > 0 {
            last_was_var = false;
        }
        let after = &rest[i + 1..];
        let Some(end) = after.find('}') else {
            return Err("unclosed `{` in the URI template: write `{name}`".into());
        };
        let name = &after[..end];
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!(
                "`{{{name}}}` is not supported: only `{{name}}` variables (letters, digits, `_`; RFC 6570 level 1) are"
            ));
        }
        if last_was_var {
            return Err("two variables touch in the URI template: put literal text (e.g. `/`) between them".into());
        }
        if names.iter().any(|n| n == name) {
            return Err(format!(
                "`{{{name}}}` appears twice in the URI template: name each variable once"
            ));
        }
        names.push(name.to_owned());
        last_was_var = true;
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
    fn template_variables_are_level_one_only() {
        assert_eq!(template_variables("test://t/{id}/data").unwrap(), ["id"]);
        assert_eq!(template_variables("a/{x}/b/{y}").unwrap(), ["x", "y"]);
        for bad in ["a/{x", "a/}", "a/{}", "a/{+x}", "a/{x}{y}", "a/{x}/{x}", "a/b"] {
            assert!(template_variables(bad).is_err(), "{bad}");
        }
    }
}
