//! Over plain http off this machine a browser offers neither Web Push nor passkeys: the feed
//! says why, and what rings the phone instead, rather than hiding both without a word.

use fantoccini::Locator;

use crate::checks::assert_fit_for_a_phone;
use crate::common::browser::Browser;
use crate::common::db::fresh_sqlite_url;
use crate::common::server::{TestServer, feed_page};
use crate::support::{close, feed_url};

/// An IPv4 address of this machine other than loopback, as a phone on the LAN would reach
/// it; `None` (after a loud `SKIPPED`, a failure in CI) when it has none.
fn lan_address() -> Option<String> {
    let out = std::process::Command::new("hostname").arg("-I").output();
    let found = out.ok().and_then(|o| {
        String::from_utf8_lossy(&o.stdout)
            .split_whitespace()
            .find(|a| {
                a.parse::<std::net::Ipv4Addr>()
                    .is_ok_and(|ip| !ip.is_loopback())
            })
            .map(str::to_string)
    });
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "this machine has no IPv4 address but loopback (`hostname -I`), which the test \
             opens the feed on as a phone would"
        );
        eprintln!("SKIPPED: no IPv4 address but loopback to open the feed on as a phone would");
    }
    found
}

/// The note's text, or `None` while it is hidden.
async fn note(b: &Browser) -> Option<String> {
    let note = b.find("#no-push").await;
    if !note.is_displayed().await.unwrap() {
        return None;
    }
    Some(note.text().await.unwrap())
}

fn says_why_and_what_works(text: &str) {
    for words in [
        "No notifications or passkeys on this page",
        "plain http",
        "A Telegram bot",
        "no https needed",
        "The ntfy app",
        "through a tunnel or Caddy",
        "minutes",
        "docs/CHANNELS.md",
    ] {
        assert!(text.contains(words), "{words:?} is not in the note: {text}");
    }
}

#[tokio::test]
async fn plain_http_off_this_machine_says_why_push_is_missing_and_what_works() {
    let Some(lan) = lan_address() else {
        return;
    };
    let Some(b) = Browser::start().await else {
        return;
    };

    // SAYSO_PUBLIC_URL=http://<LAN address>: the server knows, and says so without script.
    let db = fresh_sqlite_url();
    let srv = TestServer::start_on_every_interface(&db.url, Some(&lan)).await;
    let feed = feed_url(&srv).await;
    assert!(feed.starts_with(&format!("http://{lan}:")), "{feed}");
    let (_, html) = feed_page(&feed).await;
    let served = &html[html
        .find("id=\"no-push\"")
        .expect("the note is in the page")..];
    assert!(
        !served[..served.find('>').unwrap()].contains("hidden"),
        "the server hid the note although its public URL is plain http off loopback"
    );
    b.goto(&feed).await;
    let text = note(&b).await.expect("the note shows on a plain http page");
    says_why_and_what_works(&text);
    // Chromium offers neither here, so neither button shows.
    for offer in ["#push", "#passkey"] {
        let el = b.client.find(Locator::Css(offer)).await.unwrap();
        assert!(!el.is_displayed().await.unwrap(), "{offer} shows");
    }
    assert_fit_for_a_phone(&b, "the feed over plain http").await;
    b.screenshot("feed-plain-http").await;
    srv.stop().await;

    // No SAYSO_PUBLIC_URL, listening everywhere: links name 127.0.0.1, which the server
    // takes for a secure context, but the phone came by the LAN address; the page sees it.
    let db = fresh_sqlite_url();
    let srv = TestServer::start_on_every_interface(&db.url, None).await;
    let feed = feed_url(&srv).await;
    let (_, html) = feed_page(&feed).await;
    assert!(
        html.contains("id=\"no-push\" class=\"no-push\" hidden"),
        "{html}"
    );
    b.goto(&feed).await;
    assert_eq!(note(&b).await, None, "the note shows on a secure context");
    assert!(
        b.client
            .find(Locator::Css("#push"))
            .await
            .unwrap()
            .is_displayed()
            .await
            .unwrap(),
        "http://127.0.0.1 is a secure context: the push offer shows"
    );
    let via_lan = feed.replacen("127.0.0.1", &lan, 1);
    b.goto(&via_lan).await;
    let text = note(&b)
        .await
        .expect("the note shows when the page itself is not a secure context");
    says_why_and_what_works(&text);
    close(b, srv).await;
}
