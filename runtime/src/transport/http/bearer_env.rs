//! Bearer authentication from the environment (the variables of [`crate::auth::env`]): their
//! rules, and a start-up error that names the variable at fault.

use super::options::HttpOptions;
use crate::auth::AuthError;
use crate::auth::env::{AUTH_SERVER, JWKS_URL, JWT_AUDIENCE, JWT_ISSUER, JWT_SECRET};
use std::ffi::OsString;

impl HttpOptions {
    /// Turns on bearer tokens as the environment says; without [`JWT_SECRET`] and [`JWKS_URL`]
    /// the options are returned as they are (no tokens).
    ///
    /// | variable | meaning |
    /// |---|---|
    /// | `MCP_RESOLVE_JWT_SECRET` | HS256 tokens signed with this shared secret: 32 or more random bytes in hex or base64 (`openssl rand -base64 32`), never a passphrase |
    /// | `MCP_RESOLVE_JWKS_URL` | RS256 / ES256 / EdDSA tokens signed with keys from this JWKS (`https`, or `http` on loopback) |
    /// | `MCP_RESOLVE_JWT_AUDIENCE` | required with either: the audience tokens must name, this server's canonical URI; when it is an `http(s)` URL it is also the metadata's `resource` |
    /// | `MCP_RESOLVE_JWT_ISSUER` | the issuer tokens must name: required with `MCP_RESOLVE_JWKS_URL`, optional with a secret |
    /// | `MCP_RESOLVE_AUTH_SERVER` | the authorization server listed in the Protected Resource Metadata (default: the issuer; one of the two is required) |
    ///
    /// A secret and a JWKS URL together, an audience without either, a JWKS URL without an
    /// issuer, a secret with neither an issuer nor an authorization server, a secret that is a passphrase or under 32 bytes, a JWKS URL that is not `https`
    /// (or `http` on loopback), a value that is not UTF-8, or any of these set on a build without
    /// the `jwt` feature: an error that names the variable, for the server to refuse to start
    /// with. (A JWKS verifier that takes any issuer is built in code: `JwksVerifier::any_issuer`.)
    ///
    /// ```
    /// use mcp_resolve_runtime::HttpOptions;
    /// // Nothing set: no bearer tokens.
    /// let options = HttpOptions::default().bearer_from_env()?;
    /// # let _ = options;
    /// # Ok::<(), mcp_resolve_runtime::auth::AuthError>(())
    /// ```
    pub fn bearer_from_env(self) -> Result<Self, AuthError> {
        self.bearer_from(|name| std::env::var_os(name))
    }

    /// [`HttpOptions::bearer_from_env`] with the variables looked up by `lookup`.
    pub(crate) fn bearer_from(self, lookup: impl Fn(&str) -> Option<OsString>) -> Result<Self, AuthError> {
        let var = |name: &str| -> Result<Option<String>, AuthError> {
            match lookup(name) {
                None => Ok(None),
                Some(v) => v
                    .into_string()
                    .map(Some)
                    .map_err(|_| AuthError::new(format!("{name} is not valid UTF-8"))),
            }
        };
        let secret = var(JWT_SECRET)?;
        let jwks = var(JWKS_URL)?;
        let audience = var(JWT_AUDIENCE)?;
        let issuer = var(JWT_ISSUER)?.filter(|i| !i.is_empty());
        let auth_server = var(AUTH_SERVER)?.filter(|a| !a.is_empty());
        if secret.is_some() && jwks.is_some() {
            return Err(AuthError::new(format!(
                "{JWT_SECRET} and {JWKS_URL} are both set: set one (a shared secret, or the authorization server's keys)"
            )));
        }
        let Some((var_name, _)) = [(JWT_SECRET, &secret), (JWKS_URL, &jwks)]
            .into_iter()
            .find(|(_, v)| v.is_some())
        else {
            if let Some(name) = [
                (JWT_AUDIENCE, audience.is_some()),
                (JWT_ISSUER, issuer.is_some()),
                (AUTH_SERVER, auth_server.is_some()),
            ]
            .into_iter()
            .find_map(|(n, set)| set.then_some(n))
            {
                return Err(AuthError::new(format!(
                    "{name} is set but neither {JWT_SECRET} nor {JWKS_URL} is: set one of them to require bearer tokens, or unset {name}"
                )));
            }
            return Ok(self);
        };
        let Some(audience) = audience.filter(|a| !a.is_empty()) else {
            return Err(AuthError::new(format!(
                "{var_name} is set but {JWT_AUDIENCE} is not: set it to this server's canonical URI (e.g. https://notes.example.com/mcp), the audience its tokens are issued for"
            )));
        };
        let mut options = self.with_verifier(secret, jwks, &audience, issuer.as_deref())?;
        if issuer.is_none() && auth_server.is_none() {
            return Err(AuthError::new(format!(
                "{var_name} is set but neither {AUTH_SERVER} nor {JWT_ISSUER} is: set {AUTH_SERVER} to the authorization \
                 server that issues the tokens (e.g. https://auth.example.com); the Protected Resource Metadata must \
                 name one, so that clients know where to get a token"
            )));
        }
        if audience.starts_with("https://") || audience.starts_with("http://") {
            options = options.resource(audience);
        }
        if let Some(server) = auth_server.or(issuer) {
            options = options.authorization_server(server);
        }
        Ok(options)
    }

    #[cfg(feature = "jwt")]
    fn with_verifier(
        self,
        secret: Option<String>,
        jwks: Option<String>,
        audience: &str,
        issuer: Option<&str>,
    ) -> Result<Self, AuthError> {
        let named = |name: &'static str| move |e: AuthError| AuthError::new(format!("{name}: {e}"));
        Ok(match (secret, jwks) {
            (Some(secret), _) => {
                let mut v = crate::auth::Hs256Verifier::from_encoded(&secret, audience).map_err(named(JWT_SECRET))?;
                if let Some(i) = issuer {
                    v = v.issuer(i);
                }
                self.bearer(v)
            }
            (None, Some(url)) => {
                let v = crate::auth::JwksVerifier::new(&url, audience).map_err(named(JWKS_URL))?;
                let Some(i) = issuer else {
                    return Err(AuthError::new(format!(
                        "{JWKS_URL} is set but {JWT_ISSUER} is not: set it to the issuer its tokens name in \
                         `iss` (e.g. https://auth.example.com); the keys of an authorization server may sign \
                         the tokens of several issuers (its tenants), and another one's token would be accepted"
                    )));
                };
                self.bearer(v.issuer(i))
            }
            (None, None) => self,
        })
    }

    #[cfg(not(feature = "jwt"))]
    fn with_verifier(
        self,
        secret: Option<String>,
        _jwks: Option<String>,
        _audience: &str,
        _issuer: Option<&str>,
    ) -> Result<Self, AuthError> {
        let name = if secret.is_some() { JWT_SECRET } else { JWKS_URL };
        Err(AuthError::new(format!(
            "{name} is set, but this server was built without the `jwt` feature of mcp-resolve, so it cannot check tokens"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn from(vars: &[(&str, &str)]) -> Result<HttpOptions, AuthError> {
        let map: HashMap<String, OsString> = vars.iter().map(|(k, v)| (k.to_string(), OsString::from(v))).collect();
        HttpOptions::default().bearer_from(|name| map.get(name).cloned())
    }

    fn error(vars: &[(&str, &str)]) -> String {
        from(vars).map(|_| ()).unwrap_err().to_string()
    }

    /// 32 random bytes in base64, as `openssl rand -base64 32` makes them.
    const SECRET: &str = "q83vASNFZ4mrze8BI0VniavN7wEjRWeJq83vASNFZ4k=";

    #[test]
    fn nothing_set_is_no_tokens() {
        assert!(!from(&[]).unwrap().bearer_required());
    }

    #[test]
    fn every_mistake_names_its_variable() {
        let e = error(&[(JWT_SECRET, SECRET)]);
        assert!(
            e.starts_with("MCP_RESOLVE_JWT_SECRET is set but MCP_RESOLVE_JWT_AUDIENCE is not"),
            "{e}"
        );
        let e = error(&[
            (JWT_SECRET, SECRET),
            (JWKS_URL, "https://a.example/jwks"),
            (JWT_AUDIENCE, "x"),
        ]);
        assert!(e.contains("are both set"), "{e}");
        let e = error(&[(JWT_AUDIENCE, "https://n.example/mcp")]);
        assert!(e.starts_with("MCP_RESOLVE_JWT_AUDIENCE is set but neither"), "{e}");
        let e = error(&[(AUTH_SERVER, "https://auth.example")]);
        assert!(e.starts_with("MCP_RESOLVE_AUTH_SERVER is set"), "{e}");
        #[cfg(feature = "jwt")]
        {
            let e = error(&[(JWT_SECRET, "c2hvcnQ="), (JWT_AUDIENCE, "notes")]);
            assert!(e.starts_with("MCP_RESOLVE_JWT_SECRET: "), "{e}");
            assert!(e.contains("5 bytes, fewer than 32"), "{e}");
            let e = error(&[
                (JWKS_URL, "http://auth.example/jwks"),
                (JWT_AUDIENCE, "notes"),
                (JWT_ISSUER, "https://auth.example"),
            ]);
            assert!(e.starts_with("MCP_RESOLVE_JWKS_URL: "), "{e}");
        }
        #[cfg(not(feature = "jwt"))]
        {
            let e = error(&[(JWT_SECRET, SECRET), (JWT_AUDIENCE, "notes")]);
            assert!(e.contains("without the `jwt` feature"), "{e}");
        }
    }

    #[cfg(feature = "jwt")]
    #[test]
    fn a_jwks_url_without_an_issuer_is_refused_naming_the_variable() {
        let e = error(&[(JWKS_URL, "https://auth.example/jwks.json"), (JWT_AUDIENCE, "notes")]);
        assert!(
            e.starts_with("MCP_RESOLVE_JWKS_URL is set but MCP_RESOLVE_JWT_ISSUER is not: set it"),
            "{e}"
        );
        // An empty one is none.
        let e = error(&[
            (JWKS_URL, "https://auth.example/jwks.json"),
            (JWT_AUDIENCE, "notes"),
            (JWT_ISSUER, ""),
        ]);
        assert!(e.contains("MCP_RESOLVE_JWT_ISSUER is not"), "{e}");
    }

    #[cfg(feature = "jwt")]
    #[test]
    fn a_passphrase_secret_is_refused_saying_how_to_make_one() {
        for passphrase in [
            "a shared secret of at least thirty-two bytes",
            "correct horse battery staple correct horse",
        ] {
            let e = error(&[(JWT_SECRET, passphrase), (JWT_AUDIENCE, "notes")]);
            assert!(
                e.starts_with("MCP_RESOLVE_JWT_SECRET: the HS256 secret is neither hex nor base64"),
                "{e}"
            );
            assert!(e.contains("openssl rand -base64 32"), "{e}");
        }
        let hex = "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789";
        for good in [SECRET, hex] {
            assert!(
                from(&[
                    (JWT_SECRET, good),
                    (JWT_AUDIENCE, "notes"),
                    (AUTH_SERVER, "https://a.example")
                ])
                .unwrap()
                .bearer_required()
            );
        }
    }

    /// The metadata must name an authorization server: a secret with neither
    /// `MCP_RESOLVE_AUTH_SERVER` nor `MCP_RESOLVE_JWT_ISSUER` stops the start, naming them.
    #[cfg(feature = "jwt")]
    #[test]
    fn a_secret_without_an_authorization_server_is_refused_naming_the_variable() {
        let e = error(&[(JWT_SECRET, SECRET), (JWT_AUDIENCE, "notes")]);
        assert!(
            e.starts_with(
                "MCP_RESOLVE_JWT_SECRET is set but neither MCP_RESOLVE_AUTH_SERVER nor MCP_RESOLVE_JWT_ISSUER is"
            ),
            "{e}"
        );
        for named in [
            (AUTH_SERVER, "https://login.example"),
            (JWT_ISSUER, "https://auth.example"),
        ] {
            assert!(from(&[(JWT_SECRET, SECRET), (JWT_AUDIENCE, "notes"), named]).is_ok());
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_value_that_is_not_utf8_is_named() {
        use std::os::unix::ffi::OsStringExt;
        let bad = OsString::from_vec(vec![0xff, 0xfe]);
        let e = HttpOptions::default()
            .bearer_from(|name| (name == JWT_SECRET).then(|| bad.clone()))
            .map(|_| ())
            .unwrap_err();
        assert_eq!(e.to_string(), "MCP_RESOLVE_JWT_SECRET is not valid UTF-8");
    }

    #[cfg(feature = "jwt")]
    #[test]
    fn a_url_audience_is_the_resource_and_the_issuer_the_authorization_server() {
        let options = from(&[
            (JWKS_URL, "https://auth.example/jwks.json"),
            (JWT_AUDIENCE, "https://notes.example/mcp"),
            (JWT_ISSUER, "https://auth.example"),
        ])
        .unwrap();
        assert!(options.bearer_required());
        let debug = format!("{options:?}");
        assert!(
            debug.contains(r#"resource: Some("https://notes.example/mcp")"#),
            "{debug}"
        );
        assert!(
            debug.contains(r#"authorization_servers: ["https://auth.example"]"#),
            "{debug}"
        );
        let options = from(&[
            (JWT_SECRET, SECRET),
            (JWT_AUDIENCE, "notes"),
            (AUTH_SERVER, "https://login.example"),
        ])
        .unwrap();
        let debug = format!("{options:?}");
        assert!(debug.contains("resource: None"), "{debug}");
        assert!(
            debug.contains(r#"authorization_servers: ["https://login.example"]"#),
            "{debug}"
        );
    }
}
