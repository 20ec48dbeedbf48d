//! Outbound HTTP/1.1: a URL checked once (scheme, host, port, TLS), then one request per fresh
//! connection, over TLS for `https://` (rustls on ring, the Mozilla roots compiled in). Used by
//! the JWKS fetch (feature `jwt`) and the client's Streamable HTTP transport (feature `client`);
//! it knows nothing of MCP.

use http::{Request, Response, Uri};
use hyper::body::{Body, Incoming};
use hyper_util::rt::TokioIo;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use tokio_rustls::rustls;

/// Whether a URL may be plain `http://`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PlainHttp {
    /// To a loopback host only (`localhost`, `127.0.0.0/8`, `::1`), and connected to loopback
    /// addresses only: what is fetched in the clear must not cross a network.
    LoopbackOnly,
    /// To any host: the caller chose.
    Anywhere,
}

/// Where requests go, checked once.
pub(crate) struct Target {
    url: String,
    /// The host to connect to (an IPv6 address without its brackets).
    host: String,
    port: u16,
    /// The `Host` header.
    authority: String,
    path: String,
    /// `Some` for `https://`.
    tls: Option<tokio_rustls::TlsConnector>,
    plain: PlainHttp,
}

pub(crate) fn is_loopback_host(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost") || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

fn tls_connector() -> Result<tokio_rustls::TlsConnector, String> {
    // The provider is named, not taken from the process default: another crate in the build may
    // turn on a second one, and rustls then refuses to guess.
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS set-up: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(tokio_rustls::TlsConnector::from(Arc::new(config)))
}

impl Target {
    /// Checks `url`: `https://`, or `http://` as `plain` allows; `refused_plain` is the reason
    /// given when it does not. Errors are the reason alone (the caller names the URL).
    pub(crate) fn parse(url: &str, plain: PlainHttp, refused_plain: &str) -> Result<Self, String> {
        let uri: Uri = url.parse().map_err(|e| format!("{e}"))?;
        let authority = uri.authority().ok_or("no host")?;
        if authority.as_str().contains('@') {
            return Err("credentials in the URL are not supported".into());
        }
        let host = authority.host().trim_start_matches('[').trim_end_matches(']');
        if host.is_empty() {
            return Err("no host".into());
        }
        let (tls, default_port) = match uri.scheme_str() {
            Some("https") => (Some(tls_connector()?), 443),
            Some("http") if plain == PlainHttp::Anywhere || is_loopback_host(host) => (None, 80),
            Some("http") => return Err(refused_plain.to_owned()),
            _ if plain == PlainHttp::Anywhere => return Err("the scheme must be http or https".into()),
            _ => return Err("the scheme must be https".into()),
        };
        let path = uri.path_and_query().map_or("/", |p| p.as_str()).to_owned();
        Ok(Self {
            url: url.to_owned(),
            host: host.to_owned(),
            port: authority.port_u16().unwrap_or(default_port),
            authority: authority.as_str().to_owned(),
            path,
            tls,
            plain,
        })
    }

    /// The URL as given.
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// The path and query: a request's target.
    pub(crate) fn path(&self) -> &str {
        &self.path
    }

    /// The `Host` header's value.
    pub(crate) fn authority(&self) -> &str {
        &self.authority
    }

    /// Sends `request` on a fresh connection and hands back the response, whose body is read
    /// as it arrives (the connection is driven by a task of its own until the body is read or
    /// dropped).
    pub(crate) async fn send<B>(&self, request: Request<B>) -> Result<Response<Incoming>, String>
    where
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let tcp = self.connect().await?;
        match &self.tls {
            None => exchange(TokioIo::new(tcp), request).await,
            Some(tls) => {
                let name = rustls::pki_types::ServerName::try_from(self.host.clone())
                    .map_err(|e| format!("`{}` is no TLS server name: {e}", self.host))?;
                let stream = tls.connect(name, tcp).await.map_err(|e| format!("TLS: {e}"))?;
                exchange(TokioIo::new(stream), request).await
            }
        }
    }

    /// Connects to the first address that answers; over plain HTTP to a loopback-only target,
    /// to loopback addresses only (a `localhost` that resolves elsewhere is refused).
    async fn connect(&self) -> Result<tokio::net::TcpStream, String> {
        let loopback_only = self.tls.is_none() && self.plain == PlainHttp::LoopbackOnly;
        let addrs: Vec<SocketAddr> = tokio::net::lookup_host((self.host.as_str(), self.port))
            .await
            .map_err(|e| format!("resolving {}: {e}", self.host))?
            .filter(|a| !loopback_only || a.ip().is_loopback())
            .collect();
        let mut last = format!("{} resolves to no usable address", self.host);
        for addr in addrs {
            match tokio::net::TcpStream::connect(addr).await {
                Ok(tcp) => {
                    let _ = tcp.set_nodelay(true);
                    return Ok(tcp);
                }
                Err(e) => last = format!("connecting to {addr}: {e}"),
            }
        }
        Err(last)
    }
}

/// One request on a fresh HTTP/1.1 connection.
async fn exchange<I, B>(io: I, request: Request<B>) -> Result<Response<Incoming>, String>
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let (mut sender, conn) = hyper::client::conn::http1::handshake(io)
        .await
        .map_err(|e| e.to_string())?;
    // Driven until the response's body is read or dropped; its end is the connection's.
    tokio::spawn(async move {
        let _ = conn.await;
    });
    sender.send_request(request).await.map_err(|e| e.to_string())
}
