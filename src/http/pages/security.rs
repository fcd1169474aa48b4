//! What every page carries: strict headers, and the refusal of cross-site posts.

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;

use super::templates::error_page;
use crate::service::Service;

/// The pages load only their own stylesheet, images, scripts (no inline script), service
/// worker and manifest, fetch and submit only to themselves, and are never framed.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; style-src 'self'; img-src 'self'; \
     script-src 'self'; connect-src 'self'; worker-src 'self'; manifest-src 'self'; \
     form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// Adds the security headers to every page response.
pub async fn page_headers(req: Request, next: Next) -> Response {
    let mut resp = next.run(req).await;
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.entry(header::CACHE_CONTROL)
        .or_insert(HeaderValue::from_static("no-store"));
    resp
}

/// Refuses a `POST` that a browser made from another site. Clients that are not browsers
/// (agents, ntfy action buttons) send neither header and pass.
pub async fn refuse_cross_site(State(svc): State<Service>, req: Request, next: Next) -> Response {
    if req.method() == Method::POST && is_cross_site(req.headers(), &svc.settings().public_url) {
        return error_page(
            StatusCode::FORBIDDEN,
            "Refused",
            "This answer came from another site, so it was not accepted. Open the link itself and answer there.",
        );
    }
    next.run(req).await
}

/// `Sec-Fetch-Site` decides when present (with `Referrer-Policy: no-referrer`, Chromium sends
/// `Origin: null` on the page's own posts). Without it, an `Origin` other than `null` or the
/// public URL's own is cross-site.
fn is_cross_site(headers: &HeaderMap, public_url: &str) -> bool {
    let get = |name| {
        headers
            .get(name)
            .and_then(|v: &HeaderValue| v.to_str().ok())
    };
    if let Some(site) = get("sec-fetch-site") {
        return !matches!(site, "same-origin" | "none");
    }
    match get("origin") {
        None | Some("null") => false,
        Some(origin) => origin_of(public_url).as_deref() != Some(origin),
    }
}

fn origin_of(url: &str) -> Option<String> {
    let u = url::Url::parse(url).ok()?;
    Some(u.origin().ascii_serialization())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_static(v));
        }
        h
    }

    const URL: &str = "https://ask.example.com";

    #[test]
    fn the_pages_own_posts_pass() {
        assert!(!is_cross_site(
            &headers(&[("sec-fetch-site", "same-origin"), ("origin", "null")]),
            URL
        ));
        assert!(!is_cross_site(
            &headers(&[("origin", "https://ask.example.com")]),
            URL
        ));
        assert!(!is_cross_site(&headers(&[]), URL));
    }

    #[test]
    fn other_sites_are_refused() {
        assert!(is_cross_site(
            &headers(&[("sec-fetch-site", "cross-site")]),
            URL
        ));
        assert!(is_cross_site(
            &headers(&[("sec-fetch-site", "same-site")]),
            URL
        ));
        assert!(is_cross_site(
            &headers(&[("origin", "https://evil.example")]),
            URL
        ));
    }
}
