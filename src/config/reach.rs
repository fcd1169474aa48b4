//! Who can open the links the server hands out: warnings, at start and in `sayso config`,
//! for the two set-ups that look fine here and fail on the phone.

use super::GlobalArgs;
use crate::domain::origin::{is_loopback, is_secure_context};

impl GlobalArgs {
    /// What is wrong with where the server listens and the links it builds, each saying
    /// what to set; empty when nothing is. Listening beyond this machine without
    /// `SAYSO_PUBLIC_URL` makes links that name `localhost` (or an address chosen for
    /// listening, not for reaching); a plain-http public URL off this machine gets no Web Push
    /// and no passkeys, which browsers give only to https pages.
    pub fn reach_warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.public_url.is_none() && !self.listen.ip().is_loopback() {
            out.push(format!(
                "sayso listens on {} (beyond this machine) but SAYSO_PUBLIC_URL is not set, so \
                 every link it hands out starts with {}, which other devices cannot open: set \
                 SAYSO_PUBLIC_URL to the address a phone reaches, e.g. \
                 SAYSO_PUBLIC_URL=http://192.168.1.20:{} on the same Wi-Fi, or the https name \
                 of a tunnel or proxy",
                self.listen,
                super::default_public_url(self.listen),
                self.listen.port()
            ));
        }
        let public = self.public_url().unwrap_or_default();
        let off_loopback = url::Url::parse(&public).is_ok_and(|u| !is_loopback(&u));
        if off_loopback && !is_secure_context(&public) {
            out.push(format!(
                "the public URL {public} is plain http on another machine's address: browsers \
                 offer Web Push (\"Notify me\") and passkeys only on https pages. Set \
                 SAYSO_PUBLIC_URL=https://… (a tunnel or a proxy with a certificate, \
                 docs/DEPLOY.md), or let a chat or ntfy ring the phone instead \
                 (SAYSO_TELEGRAM_BOT_TOKEN, docs/CHANNELS.md)"
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use crate::config::{Cli, GlobalArgs};

    fn global(args: &[&str]) -> GlobalArgs {
        let mut argv = vec!["sayso"];
        argv.extend_from_slice(args);
        Cli::try_parse_from(argv).unwrap().global
    }

    #[test]
    fn loopback_or_https_needs_no_warning() {
        assert!(global(&[]).reach_warnings().is_empty());
        let g = global(&[
            "--listen",
            "0.0.0.0:8080",
            "--public-url",
            "https://ask.example.com",
        ]);
        assert!(g.reach_warnings().is_empty());
        let g = global(&["--public-url", "http://localhost:9000"]);
        assert!(g.reach_warnings().is_empty());
    }

    #[test]
    fn listening_everywhere_without_a_public_url_says_to_set_one() {
        let w = global(&["--listen", "0.0.0.0:8080"]).reach_warnings();
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("SAYSO_PUBLIC_URL is not set"), "{w:?}");
        assert!(w[0].contains("http://localhost:8080"), "{w:?}");
    }

    #[test]
    fn plain_http_off_this_machine_says_push_and_passkeys_need_https() {
        let w = global(&[
            "--listen",
            "0.0.0.0:8080",
            "--public-url",
            "http://192.168.1.20:8080",
        ])
        .reach_warnings();
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("https"), "{w:?}");
        assert!(w[0].contains("SAYSO_TELEGRAM_BOT_TOKEN"), "{w:?}");
        // A LAN address to listen on, no public URL: both.
        assert_eq!(
            global(&["--listen", "192.168.1.20:8080"])
                .reach_warnings()
                .len(),
            2
        );
    }
}
