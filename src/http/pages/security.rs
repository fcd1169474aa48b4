//! What every page carries: strict headers, and the refusal of cross-site posts; and the
//! stricter rule for the posts a browser's device cookie alone authenticates.

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;

use super::templates::error_page;
use crate::service::Service;
use crate::web::error::ApiError;

/// The pages load only their own stylesheet, images, scripts (no inline script), service
/// worker and manifest, fetch and submit only to themselves, and are never framed.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; style-src 'self'; img-src 'self'; \
     script-src 'self'; connect-src 'self'; worker-src 'self'; manifest-src 'self'; \
     form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// Adds the security headers to every page response.
pub async fn page_headers(req: Request, next: Next) -> Response {
    let mut resp = next.run(req).await;
    let h = resp.headers_mut();
    crate::web::headers::document(h, CONTENT_SECURITY_POLICY);
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
            super::reader::page_t(req.headers(), None),
            StatusCode::FORBIDDEN,
            "err-refused",
            "err-cross-site",
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

/// The rule for the posts that the device cookie alone authenticates, which only sayso's own
/// page's script makes: `POST /inbox/passkeys` (adding a passkey) and `POST /inbox/push`
/// (subscribing the device to push). Every other post of the pages carries its capability
/// in its path (`/d/…`, `/a/…`, `/inbox/{token}/push`), so another site cannot make it
/// without the link, and `refuse_cross_site` alone guards those; the answer forms keep
/// working from the page itself and from ntfy's action buttons, which send no `Origin`.
///
/// Taken only when the browser says it came from this site: `Sec-Fetch-Site: same-origin`,
/// or, from a browser that does not send that header, an `Origin` equal to the public URL's.
/// A request with neither, or `Origin: null` alone (a sandboxed frame, a `data:` page), is
/// refused (403), and so is a body not declared `application/json` (415): a cross-site
/// `text/plain` form post cannot be dressed up as the script's JSON.
pub(super) fn same_origin_json(headers: &HeaderMap, public_url: &str) -> Result<(), ApiError> {
    let get = |name| {
        headers
            .get(name)
            .and_then(|v: &HeaderValue| v.to_str().ok())
    };
    let same_origin = match get("sec-fetch-site") {
        Some(site) => site == "same-origin",
        None => get("origin").is_some_and(|o| origin_of(public_url).as_deref() == Some(o)),
    };
    if !same_origin {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "cross_site",
            "this request did not come from sayso's own page, so it was not accepted: use \
             the feed page on your device",
        ));
    }
    let json = get("content-type")
        .and_then(|t| t.split(';').next())
        .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"));
    if !json {
        return Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            "send the body as JSON, with Content-Type: application/json",
        ));
    }
    Ok(())
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

    fn cookie_post(pairs: &[(&'static str, &'static str)]) -> Result<(), StatusCode> {
        same_origin_json(&headers(pairs), URL).map_err(|e| e.status)
    }

    #[test]
    fn a_cookie_post_is_taken_only_as_json_from_the_page_itself() {
        const JSON: (&str, &str) = ("content-type", "application/json");
        assert_eq!(
            cookie_post(&[("sec-fetch-site", "same-origin"), ("origin", "null"), JSON]),
            Ok(())
        );
        assert_eq!(
            cookie_post(&[
                ("origin", "https://ask.example.com"),
                ("content-type", "application/json; charset=utf-8")
            ]),
            Ok(())
        );
        for refused in [
            &[("origin", "null"), JSON][..],
            &[JSON],
            &[("sec-fetch-site", "none"), JSON],
            &[("sec-fetch-site", "same-site"), JSON],
            &[
                ("sec-fetch-site", "cross-site"),
                ("origin", "https://ask.example.com"),
                JSON,
            ],
            &[("origin", "https://evil.example"), JSON],
        ] {
            assert_eq!(
                cookie_post(refused),
                Err(StatusCode::FORBIDDEN),
                "{refused:?}"
            );
        }
        for not_json in [
            &[
                ("sec-fetch-site", "same-origin"),
                ("content-type", "text/plain"),
            ][..],
            &[("sec-fetch-site", "same-origin")],
            &[
                ("sec-fetch-site", "same-origin"),
                ("content-type", "application/x-www-form-urlencoded"),
            ],
        ] {
            assert_eq!(
                cookie_post(not_json),
                Err(StatusCode::UNSUPPORTED_MEDIA_TYPE),
                "{not_json:?}"
            );
        }
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
