//! The checks every request of `rewind ui` passes before it is routed
//! (docs/ui.md, "Safety"): the `Host` is this server's loopback address
//! (a DNS-rebinding page has its own name there), an `Origin`, when sent,
//! is this server's own (no cross-site request), and the request carries
//! the secret printed with the URL: as `?token=` (the first load, which
//! then sets a cookie), the cookie, or the `X-Rewind-Token` header. A POST
//! must carry the header itself, with a JSON body: a cross-site form can
//! send neither.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::app::two_step::constant_time_eq;

/// The header that carries the secret on writes.
pub const TOKEN_HEADER: &str = "x-rewind-token";

/// What the guard knows: the server's port and its secret.
pub struct Guard {
    pub port: u16,
    pub secret: String,
}

/// Why a request is refused.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    BadHost,
    BadOrigin,
    CrossSite,
    NoSecret,
    BadMethod,
    WriteWithoutHeader,
    NotJson,
}

impl Refusal {
    fn status(&self) -> StatusCode {
        match self {
            Refusal::NoSecret => StatusCode::UNAUTHORIZED,
            Refusal::BadMethod => StatusCode::METHOD_NOT_ALLOWED,
            Refusal::NotJson => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            _ => StatusCode::FORBIDDEN,
        }
    }

    fn message(&self) -> &'static str {
        match self {
            Refusal::BadHost => "refused: the Host header is not this server's loopback address",
            Refusal::BadOrigin => "refused: the Origin is not this server's own",
            Refusal::CrossSite => "refused: a cross-site request",
            Refusal::NoSecret => {
                "refused: this request does not carry the secret (open the URL `rewind ui` printed)"
            }
            Refusal::BadMethod => "refused: only GET, HEAD and POST are served",
            Refusal::WriteWithoutHeader => {
                "refused: a POST must carry the secret in the X-Rewind-Token header"
            }
            Refusal::NotJson => "refused: a POST's body must be application/json",
        }
    }
}

/// How the request proved it knows the secret.
#[derive(Debug, PartialEq, Eq)]
pub enum Proof {
    /// `?token=`: answer with a cookie, so the page's later requests
    /// need not repeat it.
    Query,
    Cookie,
    Header,
}

impl Guard {
    pub fn cookie_name(&self) -> String {
        // Cookies are not kept apart by port: one name per server.
        format!("rewind-ui-{}", self.port)
    }

    /// `127.0.0.1:PORT` or `localhost:PORT`, nothing else.
    pub fn host_ok(&self, host: Option<&str>) -> bool {
        let Some(host) = host else { return false };
        let port = self.port.to_string();
        match host.rsplit_once(':') {
            Some((name, p)) if p == port => {
                name == "127.0.0.1" || name.eq_ignore_ascii_case("localhost")
            }
            _ => false,
        }
    }

    /// No Origin (a same-origin GET), or this server's own origin.
    pub fn origin_ok(&self, origin: Option<&str>) -> bool {
        match origin {
            None => true,
            Some(o) => {
                let port = self.port;
                o == format!("http://127.0.0.1:{port}")
                    || o.eq_ignore_ascii_case(&format!("http://localhost:{port}"))
            }
        }
    }

    fn is_secret(&self, s: &str) -> bool {
        constant_time_eq(s.as_bytes(), self.secret.as_bytes())
    }

    /// Which proof of the secret the request carries, if any.
    pub fn proof(&self, query: Option<&str>, headers: &HeaderMap) -> Option<Proof> {
        let header = headers.get(TOKEN_HEADER).and_then(|v| v.to_str().ok());
        if header.is_some_and(|h| self.is_secret(h)) {
            return Some(Proof::Header);
        }
        let cookie_name = self.cookie_name();
        for value in headers.get_all(header::COOKIE) {
            let Ok(value) = value.to_str() else { continue };
            for pair in value.split(';') {
                if let Some((k, v)) = pair.trim().split_once('=') {
                    if k == cookie_name && self.is_secret(v) {
                        return Some(Proof::Cookie);
                    }
                }
            }
        }
        let from_query = query.into_iter().flat_map(|q| q.split('&')).find_map(|kv| {
            kv.split_once('=')
                .filter(|(k, _)| *k == "token")
                .map(|(_, v)| v)
        });
        if from_query.is_some_and(|t| self.is_secret(t)) {
            return Some(Proof::Query);
        }
        None
    }

    /// Every check, in order; the proof of the secret when they pass.
    pub fn check(
        &self,
        method: &Method,
        query: Option<&str>,
        headers: &HeaderMap,
    ) -> Result<Proof, Refusal> {
        let text = |name: header::HeaderName| headers.get(name).and_then(|v| v.to_str().ok());
        if headers.get_all(header::HOST).iter().count() > 1 || !self.host_ok(text(header::HOST)) {
            return Err(Refusal::BadHost);
        }
        if headers.get_all(header::ORIGIN).iter().count() > 1
            || !self.origin_ok(text(header::ORIGIN))
        {
            return Err(Refusal::BadOrigin);
        }
        if let Some(site) = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok()) {
            if site == "cross-site" || site == "same-site" {
                return Err(Refusal::CrossSite);
            }
        }
        let proof = self.proof(query, headers).ok_or(Refusal::NoSecret)?;
        if *method == Method::POST {
            if proof != Proof::Header {
                return Err(Refusal::WriteWithoutHeader);
            }
            let json = text(header::CONTENT_TYPE)
                .is_some_and(|c| c.split(';').next() == Some("application/json"));
            if !json {
                return Err(Refusal::NotJson);
            }
        } else if *method != Method::GET && *method != Method::HEAD {
            return Err(Refusal::BadMethod);
        }
        Ok(proof)
    }
}

/// The Content-Security-Policy of every answer: the page loads nothing
/// from anywhere but this server, and is framed by nobody.
pub const CSP: &str =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
     connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; \
     frame-ancestors 'none'";

/// The middleware: runs before routing (it wraps the whole router).
pub async fn middleware(State(guard): State<Arc<Guard>>, req: Request, next: Next) -> Response {
    let checked = guard.check(req.method(), req.uri().query(), req.headers());
    let mut response = match checked {
        Err(refusal) => {
            tracing::info!(?refusal, uri = %req.uri(), "refused");
            (refusal.status(), refusal.message()).into_response()
        }
        Ok(proof) => {
            let mut response = next.run(req).await;
            if proof == Proof::Query {
                let cookie = format!(
                    "{}={}; HttpOnly; SameSite=Strict; Path=/",
                    guard.cookie_name(),
                    guard.secret
                );
                if let Ok(v) = HeaderValue::from_str(&cookie) {
                    response.headers_mut().append(header::SET_COOKIE, v);
                }
            }
            response
        }
    };
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard() -> Guard {
        Guard {
            port: 4242,
            secret: "s3cret".into(),
        }
    }

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(
                header::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        h
    }

    #[test]
    fn host_must_be_our_loopback_address() {
        let g = guard();
        assert!(g.host_ok(Some("127.0.0.1:4242")));
        assert!(g.host_ok(Some("localhost:4242")));
        assert!(g.host_ok(Some("LOCALHOST:4242")));
        assert!(!g.host_ok(None));
        assert!(!g.host_ok(Some("127.0.0.1")));
        assert!(!g.host_ok(Some("127.0.0.1:4243")));
        assert!(!g.host_ok(Some("evil.example:4242")));
        assert!(!g.host_ok(Some("localhost.evil.example:4242")));
        assert!(!g.host_ok(Some("[::1]:4242")));
        assert!(!g.host_ok(Some("127.0.0.2:4242")));
    }

    #[test]
    fn origin_absent_or_ours() {
        let g = guard();
        assert!(g.origin_ok(None));
        assert!(g.origin_ok(Some("http://127.0.0.1:4242")));
        assert!(g.origin_ok(Some("http://localhost:4242")));
        assert!(!g.origin_ok(Some("null")));
        assert!(!g.origin_ok(Some("http://evil.example")));
        assert!(!g.origin_ok(Some("http://127.0.0.1:4243")));
        assert!(!g.origin_ok(Some("https://127.0.0.1:4242")));
    }

    #[test]
    fn secret_by_query_cookie_or_header() {
        let g = guard();
        let none = HeaderMap::new();
        assert_eq!(g.proof(Some("token=s3cret"), &none), Some(Proof::Query));
        assert_eq!(g.proof(Some("a=1&token=s3cret"), &none), Some(Proof::Query));
        assert_eq!(g.proof(Some("token=s3cre"), &none), None);
        assert_eq!(g.proof(Some("token=s3cretx"), &none), None);
        assert_eq!(g.proof(None, &none), None);
        let c = headers(&[("cookie", "a=b; rewind-ui-4242=s3cret")]);
        assert_eq!(g.proof(None, &c), Some(Proof::Cookie));
        // Another server's cookie is not ours.
        let c = headers(&[("cookie", "rewind-ui-4243=s3cret")]);
        assert_eq!(g.proof(None, &c), None);
        let h = headers(&[("x-rewind-token", "s3cret")]);
        assert_eq!(g.proof(None, &h), Some(Proof::Header));
        let h = headers(&[("x-rewind-token", "nope")]);
        assert_eq!(g.proof(None, &h), None);
    }

    #[test]
    fn every_check_in_order() {
        let g = guard();
        let ok = [("host", "127.0.0.1:4242"), ("x-rewind-token", "s3cret")];
        assert_eq!(
            g.check(&Method::GET, None, &headers(&ok)),
            Ok(Proof::Header)
        );
        // The Host is checked first, even with the secret.
        let h = headers(&[("host", "evil.example:4242"), ("x-rewind-token", "s3cret")]);
        assert_eq!(g.check(&Method::GET, None, &h), Err(Refusal::BadHost));
        let h = headers(&[("x-rewind-token", "s3cret")]);
        assert_eq!(g.check(&Method::GET, None, &h), Err(Refusal::BadHost));
        let h = headers(&[
            ("host", "127.0.0.1:4242"),
            ("host", "evil.example:4242"),
            ("x-rewind-token", "s3cret"),
        ]);
        assert_eq!(g.check(&Method::GET, None, &h), Err(Refusal::BadHost));
        let h = headers(&[
            ("host", "127.0.0.1:4242"),
            ("origin", "http://evil.example"),
            ("x-rewind-token", "s3cret"),
        ]);
        assert_eq!(g.check(&Method::GET, None, &h), Err(Refusal::BadOrigin));
        let h = headers(&[
            ("host", "127.0.0.1:4242"),
            ("sec-fetch-site", "cross-site"),
            ("x-rewind-token", "s3cret"),
        ]);
        assert_eq!(g.check(&Method::GET, None, &h), Err(Refusal::CrossSite));
        let h = headers(&[("host", "127.0.0.1:4242")]);
        assert_eq!(g.check(&Method::GET, None, &h), Err(Refusal::NoSecret));
        assert_eq!(
            g.check(&Method::GET, Some("token=s3cret"), &h),
            Ok(Proof::Query)
        );
        // A POST needs the header (a cookie alone is what a cross-site
        // form would send) and a JSON body.
        let h = headers(&[
            ("host", "127.0.0.1:4242"),
            ("cookie", "rewind-ui-4242=s3cret"),
        ]);
        assert_eq!(g.check(&Method::GET, None, &h), Ok(Proof::Cookie));
        assert_eq!(
            g.check(&Method::POST, None, &h),
            Err(Refusal::WriteWithoutHeader)
        );
        assert_eq!(
            g.check(&Method::POST, None, &headers(&ok)),
            Err(Refusal::NotJson)
        );
        let h = headers(&[
            ("host", "127.0.0.1:4242"),
            ("x-rewind-token", "s3cret"),
            ("content-type", "application/json; charset=utf-8"),
        ]);
        assert_eq!(g.check(&Method::POST, None, &h), Ok(Proof::Header));
        assert_eq!(g.check(&Method::PUT, None, &h), Err(Refusal::BadMethod));
    }
}
