//! A page's forms posted as a browser posts them: urlencoded, from the page itself
//! (`Sec-Fetch-Site: same-origin`), its redirect shown rather than followed.

use reqwest::redirect::Policy;
use reqwest::{Client, IntoUrl, RequestBuilder, Response};

/// A client that shows redirects instead of following them, like a form post's first hop.
pub fn no_redirects() -> Client {
    Client::builder().redirect(Policy::none()).build().unwrap()
}

/// A urlencoded post of `body` to `url` from a form whose site the caller says, if any.
pub fn form(url: impl IntoUrl, body: impl Into<reqwest::Body>) -> RequestBuilder {
    no_redirects()
        .post(url)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
}

/// A post of `body` to `url` from a form of the page itself.
pub fn page_form(url: impl IntoUrl, body: impl Into<reqwest::Body>) -> RequestBuilder {
    form(url, body).header("sec-fetch-site", "same-origin")
}

/// A form post as the page's buttons send it, from a page whose origin is opaque (`null`).
pub async fn form_post(url: &str, body: &str) -> Response {
    page_form(url, body.to_string())
        .header("origin", "null")
        .send()
        .await
        .unwrap()
}
