//! The likely mistake in `--server` / `SAYSO_URL`: a person's link pasted where the server's
//! address belongs, and, when the server cannot be reached, the error's words turned into
//! what is probably wrong (http for https and back, the port, the host).

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

/// A person's page pasted as the server's address (the feed link `…/inbox/TOKEN`, a
/// question's `…/d/TOKEN`, an approval's `…/a/TOKEN`): what it is, in words, and the server's
/// address it starts with. `None` for any other URL.
pub fn page_link(url: &Url) -> Option<(&'static str, String)> {
    let segments: Vec<&str> = url.path_segments()?.filter(|s| !s.is_empty()).collect();
    // The page's name is the last segment (`/inbox`, the feed at a bound device's address) or
    // the one before its token; whatever comes before it is the server's own path.
    let at = match segments.as_slice() {
        [.., "inbox"] => segments.len() - 1,
        [.., page, _token] if matches!(*page, "inbox" | "d" | "a") => segments.len() - 2,
        _ => return None,
    };
    let what = match segments[at] {
        "inbox" => "your feed's link, which answers as you: keep it out of an agent's environment",
        "d" => "a question's answer link",
        _ => "an approval link, which answers as you: keep it out of an agent's environment",
    };
    let mut address = url.clone();
    address.set_query(None);
    address.set_fragment(None);
    address.set_path(&segments[..at].join("/"));
    Some((what, address.as_str().trim_end_matches('/').to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_persons_link_is_told_from_the_servers_address() {
        let page = |u: &str| page_link(&Url::parse(u).unwrap());
        let (what, address) = page("http://192.168.1.5:8080/inbox/AZm3tok?x=1").unwrap();
        assert!(what.starts_with("your feed's link"), "{what}");
        assert_eq!(address, "http://192.168.1.5:8080");
        let (what, address) = page("https://example.com/sayso/d/AZmtok").unwrap();
        assert_eq!(what, "a question's answer link");
        assert_eq!(address, "https://example.com/sayso");
        assert!(
            page("https://example.com/a/tok")
                .unwrap()
                .0
                .starts_with("an approval link")
        );
        assert_eq!(page("http://h:8080/inbox").unwrap().1, "http://h:8080");
        for server in [
            "http://127.0.0.1:8080",
            "https://example.com/sayso/",
            "http://h/v1",
        ] {
            assert_eq!(page(server), None, "{server}");
        }
    }

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
