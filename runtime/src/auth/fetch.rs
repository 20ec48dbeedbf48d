//! Fetching a JWKS document: one GET over HTTPS (or plain HTTP to a loopback host), bounded in
//! size and in time, no redirect followed.

use super::AuthError;
use crate::outbound::{PlainHttp, Target};
use bytes::Bytes;
use http::{Request, StatusCode, header};
use http_body_util::{BodyExt, Empty, Limited};
use std::time::Duration;

/// Where a JWKS document is fetched from, checked once when the verifier is built.
pub(super) struct JwksSource {
    target: Target,
}

impl JwksSource {
    /// Checks `url`: `https://`, or `http://` to a loopback host only (keys fetched in the clear
    /// could be swapped by anyone on the path, and would then sign any token they like).
    pub(super) fn parse(url: &str) -> Result<Self, AuthError> {
        let target = Target::parse(
            url,
            PlainHttp::LoopbackOnly,
            "plain http is accepted for loopback hosts only; anyone on the path could swap \
             the keys of a JWKS fetched in the clear",
        )
        .map_err(|why| AuthError::new(format!("JWKS URL `{url}`: {why}")))?;
        Ok(Self { target })
    }

    /// The URL, for messages.
    pub(super) fn url(&self) -> &str {
        self.target.url()
    }

    /// GETs the document: status 200, at most `max_bytes` of body, all within `timeout`.
    pub(super) async fn get(&self, timeout: Duration, max_bytes: usize) -> Result<Bytes, AuthError> {
        let fail = |why: String| AuthError::new(format!("fetching the JWKS at {}: {why}", self.url()));
        match tokio::time::timeout(timeout, self.get_unbounded_in_time(max_bytes)).await {
            Ok(r) => r.map_err(fail),
            Err(_) => Err(fail(format!("no complete answer within {timeout:?}"))),
        }
    }

    async fn get_unbounded_in_time(&self, max_bytes: usize) -> Result<Bytes, String> {
        let request = Request::get(self.target.path())
            .header(header::HOST, self.target.authority())
            .header(header::ACCEPT, "application/jwk-set+json, application/json")
            .header(header::USER_AGENT, "mcp-resolve")
            .body(Empty::<Bytes>::new())
            .map_err(|e| e.to_string())?;
        let response = self.target.send(request).await?;
        if response.status() != StatusCode::OK {
            return Err(format!("answered {}", response.status()));
        }
        let too_long = response
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok())
            .is_some_and(|n| n > max_bytes as u64);
        if too_long {
            return Err(format!("the document is longer than {max_bytes} bytes"));
        }
        Limited::new(response.into_body(), max_bytes)
            .collect()
            .await
            .map(|b| b.to_bytes())
            .map_err(|e| format!("reading the document (at most {max_bytes} bytes): {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A one-shot HTTP server on loopback: reads a request, answers `response`, and hands back
    /// the request's text.
    async fn serve_once(response: &'static str) -> (String, tokio::task::JoinHandle<String>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/keys.json?v=1", listener.local_addr().unwrap());
        let served = tokio::spawn(async move {
            let (mut tcp, _) = listener.accept().await.unwrap();
            let mut request = Vec::new();
            let mut buf = [0u8; 1024];
            while !request.ends_with(b"\r\n\r\n") {
                let n = tcp.read(&mut buf).await.unwrap();
                if n == 0 {
                    break;
                }
                request.extend_from_slice(&buf[..n]);
            }
            tcp.write_all(response.as_bytes()).await.unwrap();
            tcp.shutdown().await.unwrap();
            String::from_utf8_lossy(&request).into_owned()
        });
        (url, served)
    }

    #[test]
    fn https_anywhere_and_plain_http_to_loopback_only() {
        for ok in [
            "https://auth.example.com/jwks",
            "http://127.0.0.1:9/jwks",
            "http://localhost/jwks",
            "http://[::1]:8/k",
        ] {
            let source = JwksSource::parse(ok).unwrap_or_else(|e| panic!("{ok}: {e}"));
            assert_eq!(source.url(), ok);
        }
        let refused = [
            (
                "http://auth.example.com/jwks",
                "plain http is accepted for loopback hosts only",
            ),
            ("ftp://127.0.0.1/jwks", "the scheme must be https"),
            ("https://user:pw@auth.example.com/jwks", "credentials in the URL"),
            ("/jwks", "no host"),
        ];
        for (url, why) in refused {
            let e = JwksSource::parse(url).err().unwrap_or_else(|| panic!("{url} accepted"));
            assert!(e.to_string().contains(why), "{url}: {e}");
        }
    }

    #[tokio::test]
    async fn the_document_is_fetched_with_one_get_to_its_path() {
        let (url, served) =
            serve_once("HTTP/1.1 200 OK\r\ncontent-length: 11\r\nconnection: close\r\n\r\n{\"keys\":[]}").await;
        let source = JwksSource::parse(&url).unwrap();
        let body = source.get(Duration::from_secs(10), 1024).await.unwrap();
        assert_eq!(&body[..], b"{\"keys\":[]}");
        let request = served.await.unwrap();
        // A document exactly as long as the bound is taken.
        let (url, _served) =
            serve_once("HTTP/1.1 200 OK\r\ncontent-length: 11\r\nconnection: close\r\n\r\n{\"keys\":[]}").await;
        let body = JwksSource::parse(&url)
            .unwrap()
            .get(Duration::from_secs(10), 11)
            .await
            .unwrap();
        assert_eq!(body.len(), 11);
        assert!(request.starts_with("GET /keys.json?v=1 HTTP/1.1\r\n"), "{request}");
    }

    #[tokio::test]
    async fn another_status_or_a_longer_document_is_an_error_naming_the_url() {
        let (url, _served) = serve_once("HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n").await;
        let e = JwksSource::parse(&url)
            .unwrap()
            .get(Duration::from_secs(10), 1024)
            .await
            .unwrap_err();
        assert!(e.to_string().contains("answered 404"), "{e}");
        assert!(e.to_string().contains(&url), "{e}");
        let (url, _served) = serve_once("HTTP/1.1 200 OK\r\ncontent-length: 2000\r\n\r\n").await;
        let e = JwksSource::parse(&url)
            .unwrap()
            .get(Duration::from_secs(10), 1024)
            .await
            .unwrap_err();
        assert!(e.to_string().contains("longer than 1024 bytes"), "{e}");
    }
}
