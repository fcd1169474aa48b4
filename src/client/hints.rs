//! What to say when the server cannot be reached: the error's words turned into the likely
//! mistake in `--server` / `SAYSO_URL` (http for https and back, the port, the host).

use url::Url;

/// A sentence on what is probably wrong, from the URL tried and the error's full text.
pub fn unreachable_hint(base: &Url, error: &str) -> String {
    let host = base.host_str().unwrap_or("?");
    let at = match base.port_or_known_default() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_string(),
    };
    let lower = error.to_ascii_lowercase();
    let said = |words: &[&str]| words.iter().any(|w| lower.contains(w));
    if base.scheme() == "https"
        && said(&[
            "invalidcontenttype",
            "corrupt message",
            "wrong version number",
            "http request",
        ])
    {
        return format!(
            "the server at {at} speaks plain HTTP, not HTTPS: write http:// instead of https:// \
             in --server / SAYSO_URL"
        );
    }
    if said(&["connection refused"]) {
        return format!(
            "nothing listens at {at}: is `sayso serve` running, and on this port? Check the \
             port in --server / SAYSO_URL ({base})"
        );
    }
    if said(&["dns error", "failed to lookup", "name or service not known"]) {
        return format!("the host name {host:?} is not known: check --server / SAYSO_URL ({base})");
    }
    if said(&["timed out", "deadline has elapsed"]) {
        return format!(
            "no answer from {at}: check the host and port in --server / SAYSO_URL ({base}); a \
             firewall may be dropping the connection"
        );
    }
    if base.scheme() == "http" {
        return format!(
            "the server at {at} answered, but not in plain HTTP: if it speaks HTTPS, write \
             https:// in --server / SAYSO_URL"
        );
    }
    format!("check --server / SAYSO_URL ({base})")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hint(base: &str, error: &str) -> String {
        unreachable_hint(&Url::parse(base).unwrap(), error)
    }

    #[test]
    fn each_mistake_gets_its_own_words() {
        let tls = "error sending request: client error (Connect): received corrupt message of \
                   type InvalidContentType";
        assert!(hint("https://127.0.0.1:8080", tls).contains("write http:// instead of https://"));
        let refused = "tcp connect error: Connection refused (os error 111)";
        let h = hint("http://127.0.0.1:9999", refused);
        assert!(h.contains("nothing listens at 127.0.0.1:9999"), "{h}");
        let h = hint(
            "http://nohost.invalid",
            "dns error: failed to lookup address",
        );
        assert!(h.contains("\"nohost.invalid\" is not known"), "{h}");
        let h = hint(
            "http://127.0.0.1:8443",
            "connection closed before message completed",
        );
        assert!(h.contains("write https://"), "{h}");
    }
}
