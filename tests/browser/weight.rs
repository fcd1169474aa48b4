//! Looking decides nothing, and the page is light: ≤ 30 KB with all it loads, all from the
//! service's own host (docs/PAGES.md, docs/PERFORMANCE.md).

use std::collections::BTreeSet;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::common::browser::Browser;
use crate::common::server::{TestServer, s};
use crate::support::{close, feed_url, setup};

/// The budget of an answer page with everything it loads.
const BUDGET: u64 = 30 * 1024;

#[tokio::test]
async fn fetching_links_many_times_decides_nothing() {
    let Some((b, srv, _db)) = setup().await else {
        return;
    };
    let decisions = [
        srv.create(json!({"question": "Delete the old backups?", "kind": "bool"}))
            .await,
        srv.create(json!({"question": "Which plan?", "kind": "choose",
            "options": [{"label": "A", "preview": "**a**"}, "B"], "recommended": 0}))
            .await,
        srv.create(json!({"question": "Pay the invoice", "kind": "todo"}))
            .await,
    ];
    let feed = feed_url(&srv).await;
    // Like a mail scanner: many plain GETs of every link, then a browser opening each.
    for _ in 0..20 {
        for url in decisions
            .iter()
            .map(|h| s(h, "web_url"))
            .chain([feed.as_str()])
        {
            // The feed link sends the browser on to /inbox with its device cookie.
            let resp = if url == feed {
                crate::common::server::open_feed(url).await.0
            } else {
                srv.client.get(url).send().await.unwrap()
            };
            assert_eq!(resp.status(), StatusCode::OK, "GET {url}");
            resp.bytes().await.unwrap();
        }
    }
    for h in &decisions {
        for _ in 0..3 {
            b.goto(s(h, "web_url")).await;
        }
        b.client.refresh().await.unwrap();
    }
    b.goto(&feed).await;
    b.client.refresh().await.unwrap();
    for h in &decisions {
        let id = s(h, "decision_id");
        assert_eq!(
            srv.get(id).await["status"],
            "pending",
            "{id} was decided by a GET"
        );
        let (_, d) = srv.await_decision(id, 1).await;
        assert_eq!(d["status"], "pending");
        assert!(d["outcome"].is_null());
    }
    close(b, srv).await;
}

#[tokio::test]
async fn answer_pages_weigh_at_most_30_kb_all_from_their_own_host() {
    let Some((b, srv, _db)) = setup().await else {
        return;
    };
    let choose = srv
        .create(json!({"question": "Which rollout plan for the billing service?",
            "kind": "choose", "project": "billing",
            "context_md": "## What changes\n\nThe invoice job moves to the new queue. \
                Rollback takes *ten minutes*.\n\n| step | time |\n|---|---|\n| drain | 2 min |\n| switch | 1 min |\n\n\
                ```sh\nsayso ask \"Deploy?\" --kind bool --wait\n```\n",
            "attachments": [{"name": "Runbook", "url": "https://runbooks.example.com/billing"}],
            "options": [
                {"label": "Canary first", "description": "5 % of traffic for an hour",
                 "preview": "```\ncanary: 5%\nwait: 1h\n```"},
                {"label": "All at once", "description": "fastest, riskiest"},
                {"label": "Wait for Monday"}
            ],
            "recommended": 0}))
        .await;
    let form = srv
        .create(
            json!({"question": "Order the team licences", "kind": "form",
            "schema": {"type": "object", "properties": {
                "name": {"type": "string", "title": "Your name"},
                "email": {"type": "string", "format": "email", "title": "Billing email"},
                "seats": {"type": "integer", "minimum": 1, "maximum": 10},
                "plan": {"type": "string", "enum": ["free", "pro", "team"]},
                "start": {"type": "string", "format": "date"},
                "newsletter": {"type": "boolean"}
            }, "required": ["name", "email"]}}),
        )
        .await;
    for (name, h) in [("choose", &choose), ("form", &form)] {
        let url = s(h, "web_url");
        let in_browser = weigh_in_browser(&b, &srv, url).await;
        let with_reqwest = weigh_with_reqwest(&b, &srv, url).await;
        println!(
            "{name} answer page: {in_browser} bytes transferred in Chromium, \
             {with_reqwest} bytes of HTML and referenced files"
        );
        assert!(
            in_browser <= BUDGET,
            "the {name} page transfers {in_browser} bytes"
        );
        assert!(
            with_reqwest <= BUDGET,
            "the {name} page and its files weigh {with_reqwest} bytes"
        );
    }
    close(b, srv).await;
}

/// Whether `url` is on the test server's host and port.
fn same_host(srv: &TestServer, url: &str) -> bool {
    let base = url::Url::parse(&srv.base).unwrap();
    let u = url::Url::parse(url).unwrap_or_else(|e| panic!("{url}: {e}"));
    u.host_str() == base.host_str() && u.port_or_known_default() == base.port_or_known_default()
}

/// What Chromium transferred for the page: the navigation and every resource timing entry.
async fn weigh_in_browser(b: &Browser, srv: &TestServer, url: &str) -> u64 {
    b.goto(url).await;
    let entries = b
        .js(
            "const size = e => e.transferSize || e.encodedBodySize || 0;
             return [...performance.getEntriesByType('navigation'),
                     ...performance.getEntriesByType('resource')]
                 .map(e => ({name: e.name, size: size(e)}));",
            vec![],
        )
        .await;
    let entries = entries.as_array().expect("entries");
    assert!(!entries.is_empty(), "no navigation entry");
    let mut total = 0;
    for e in entries {
        let name = e["name"].as_str().unwrap_or_default();
        assert!(same_host(srv, name), "{url} loads {name} from another host");
        let size = e["size"].as_u64().unwrap_or(0);
        println!("  {size:>6}  {name}");
        total += size;
    }
    total
}

/// The bytes of the HTML and of every `link[href]`, `script[src]` and `img[src]` it names
/// (as the browser resolved them), fetched again with reqwest.
async fn weigh_with_reqwest(b: &Browser, srv: &TestServer, url: &str) -> u64 {
    let refs = b
        .js(
            "return [...document.querySelectorAll('link[href], script[src], img[src]')]
                 .map(e => e.href || e.src);",
            vec![],
        )
        .await;
    let refs: BTreeSet<String> = refs
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect();
    let mut total = 0;
    for u in std::iter::once(url.to_owned()).chain(refs) {
        assert!(same_host(srv, &u), "{url} refers to {u} on another host");
        let resp = srv.client.get(&u).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::OK, "GET {u}");
        let size = resp.bytes().await.unwrap().len() as u64;
        println!("  {size:>6}  {u} (reqwest)");
        total += size;
    }
    total
}
