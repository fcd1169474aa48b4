//! Whether a browser gives a page at a URL what only a secure context gets: Web Push and
//! passkeys. A page is a secure context over https, or over plain http on this machine alone
//! (`localhost`, `*.localhost`, 127.0.0.0/8, `::1`): the W3C's "potentially trustworthy
//! origin". A phone that opens `http://192.168.1.20:8080` gets neither.

use url::{Host, Url};

/// Whether pages under `public_url` are a secure context in a browser. A URL that does not
/// parse is not one.
pub fn is_secure_context(public_url: &str) -> bool {
    let Ok(url) = Url::parse(public_url) else {
        return false;
    };
    match url.scheme() {
        "https" => true,
        "http" => is_loopback(&url),
        _ => false,
    }
}

/// Whether `url` names this machine alone.
pub fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(Host::Domain(d)) => {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            d == "localhost" || d.ends_with(".localhost")
        }
        Some(Host::Ipv4(ip)) => ip.is_loopback(),
        Some(Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn https_anywhere_and_http_on_this_machine_are_secure_contexts() {
        for url in [
            "https://ask.example.com",
            "https://192.168.1.20:8443",
            "http://localhost:8080",
            "http://app.localhost:8080",
            "http://127.0.0.1:8080",
            "http://127.8.0.1",
            "http://[::1]:8080",
        ] {
            assert!(is_secure_context(url), "{url}");
        }
    }

    #[test]
    fn plain_http_off_this_machine_is_not_a_secure_context() {
        for url in [
            "http://192.168.1.20:8080",
            "http://ask.example.com",
            "http://[fd00::1]:8080",
            "http://0.0.0.0:8080",
            "http://localhost.example.com",
            "not a url",
        ] {
            assert!(!is_secure_context(url), "{url}");
        }
    }
}
