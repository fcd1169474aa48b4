//! The headers that keep a browser from reading a response other than as sent: the pages,
//! the API docs and the assets they load.

use axum::http::{HeaderMap, HeaderValue, header};

/// The type is the one the response says: a browser must not guess another.
pub fn no_sniff(h: &mut HeaderMap) {
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
}

/// A document a browser shows: what it may load (`csp`), no referrer sent on from it, and
/// its type never guessed.
pub fn document(h: &mut HeaderMap, csp: &'static str) {
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(csp),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    no_sniff(h);
}
