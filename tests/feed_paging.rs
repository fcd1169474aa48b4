//! The feed a page at a time: more pending items than one page holds are all reached by
//! following its "Next" links, each exactly once, soonest expiry first; a page fills up past
//! decisions that ask someone else; the heading counts what waits when it can; a cursor the
//! feed never wrote answers a 400 page, never a 500. On SQLite and PostgreSQL.

mod common;

use std::collections::HashSet;

use common::server::{TestServer, next_link, open_feed};
use reqwest::redirect::Policy;
use reqwest::{Client, StatusCode};
use serde_json::json;

/// The feed's page size (`sayso::service::FEED_PAGE`).
const PAGE: usize = sayso::service::FEED_PAGE;

/// The page at `url` (an absolute URL or a path on `base`) with the device `cookie`.
async fn get(base: &str, url: &str, cookie: &str) -> (StatusCode, String) {
    let url = if url.starts_with("http") {
        url.to_string()
    } else {
        format!("{base}{url}")
    };
    let resp = Client::builder()
        .redirect(Policy::none())
        .build()
        .unwrap()
        .get(url)
        .header("cookie", cookie)
        .send()
        .await
        .unwrap();
    (resp.status(), resp.text().await.unwrap())
}

/// The numbers of the questions "Q~0007" a page lists, in page order (`~` is in no link's
/// token).
fn numbers(html: &str) -> Vec<u32> {
    html.split("Q~")
        .skip(1)
        .map(|rest| rest[..4].parse().expect("four digits after Q~"))
        .collect()
}

/// Follows the feed's pages from its first: the numbers each page lists.
async fn walk(srv: &TestServer, cookie: &str, first: &str) -> Vec<Vec<u32>> {
    let mut pages = Vec::new();
    let mut url = Some(first.to_string());
    while let Some(u) = url {
        let (status, html) = get(&srv.base, &u, cookie).await;
        assert_eq!(status, StatusCode::OK, "{u}: {html}");
        pages.push(numbers(&html));
        url = next_link(&html);
        assert!(pages.len() < 20, "the pages never end");
    }
    pages
}

async fn create(srv: &TestServer, n: u32, extra: serde_json::Value) {
    // Expiry grows with the number, so the feed's order is the numbers' order.
    let mut body = json!({"question": format!("Q~{n:04}"), "kind": "bool", "notify": "none",
                          "ttl_seconds": 3600 + 10 * n});
    if n.is_multiple_of(3) {
        body = json!({"question": format!("Q~{n:04}"), "kind": "todo", "notify": "none",
                      "ttl_seconds": 3600 + 10 * n});
    }
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    srv.create(body).await;
}

async fn every_pending_item_is_reached_once_in_order(db_url: &str) {
    let srv = TestServer::start(db_url).await;
    let asked: u32 = 120;
    for n in 0..asked {
        create(&srv, n, json!({})).await;
    }
    let feed = srv.feed_url().await;
    let (resp, cookie) = open_feed(&feed).await;
    let cookie = cookie.expect("the feed link binds the browser");
    let html = resp.text().await.unwrap();
    // Alone in the inbox, the person is asked all of it: the count is exact.
    assert!(html.contains("<h1>120 waiting for you</h1>"), "{html}");
    assert!(html.contains("<title>(120) sayso"), "{html}");
    assert_eq!(numbers(&html).len(), PAGE, "{html}");
    assert!(
        html.contains("The 50 that expire soonest are shown here."),
        "{html}"
    );

    // Now someone else is asked too, between the person's own: a page fills up past them.
    srv.add_person("ben").await;
    for n in asked..asked + 40 {
        create(&srv, n, json!({"kind": "bool", "approvers": ["ben"]})).await;
    }
    let theirs: Vec<u32> = (asked..asked + 40).collect();
    for n in asked + 40..asked + 60 {
        create(&srv, n, json!({})).await;
    }
    let pages = walk(&srv, &cookie, "/inbox").await;
    let (_, first) = get(&srv.base, "/inbox", &cookie).await;
    // With two people the routing rules decide, which only reading every row would count.
    assert!(
        first.contains("<h1>50 or more waiting for you</h1>"),
        "{first}"
    );
    let seen: Vec<u32> = pages.iter().flatten().copied().collect();
    let unique: HashSet<u32> = seen.iter().copied().collect();
    assert_eq!(unique.len(), seen.len(), "an item on two pages: {pages:?}");
    let expected: HashSet<u32> = (0..asked + 60).filter(|n| !theirs.contains(n)).collect();
    assert_eq!(unique, expected, "pages: {pages:?}");
    for page in &pages[..pages.len() - 1] {
        assert_eq!(page.len(), PAGE, "a page short of its size: {pages:?}");
    }
    // Soonest expiry first: every page's items come after the last page's, and within a
    // page each section (decisions, then to-dos) runs in order.
    for w in pages.windows(2) {
        assert!(
            w[0].iter().max() < w[1].iter().min(),
            "out of order: {pages:?}"
        );
    }
    for page in &pages {
        let (todos, decisions): (Vec<u32>, Vec<u32>) =
            page.iter().partition(|n| n.is_multiple_of(3));
        assert!(decisions.is_sorted() && todos.is_sorted(), "{page:?}");
    }
    // The last page says so and leads back to the first.
    let mut url = "/inbox".to_string();
    let last = loop {
        let (_, html) = get(&srv.base, &url, &cookie).await;
        match next_link(&html) {
            Some(next) => url = next,
            None => break html,
        }
    };
    assert!(last.contains("That is the last of what waits."), "{last}");
    assert!(
        last.contains(r#"<a href="/inbox" class="paging-first">"#),
        "{last}"
    );

    // Ben is asked his 40 and, like everyone, what names nobody: all of it, by his pages.
    let ben = srv
        .svc
        .store()
        .people(srv.default_inbox().await.id)
        .await
        .unwrap()
        .into_iter()
        .find(|p| p.name == "ben")
        .unwrap();
    let token = srv.svc.tokens().feed_token(ben.id);
    let (_, ben_cookie) = open_feed(&format!("{}/inbox/{token}", srv.base)).await;
    let pages = walk(&srv, &ben_cookie.unwrap(), "/inbox").await;
    assert_eq!(
        pages.iter().map(Vec::len).collect::<Vec<_>>(),
        [PAGE, PAGE, PAGE, 180 - 3 * PAGE]
    );
    let mut all: Vec<u32> = pages.concat();
    all.sort_unstable();
    assert_eq!(all, (0..asked + 60).collect::<Vec<_>>());

    // A project filter pages the same way and keeps its filter in the link.
    for n in 200..260 {
        create(&srv, n, json!({"project": "shop & co"})).await;
    }
    let (_, html) = get(&srv.base, "/inbox?project=shop+%26+co", &cookie).await;
    let mut first = numbers(&html);
    first.sort_unstable();
    assert_eq!(first, (200..250).collect::<Vec<_>>(), "{html}");
    let next = next_link(&html).expect("a next page");
    assert!(
        next.starts_with("/inbox?project=shop+%26+co&after="),
        "{next}"
    );
    let pages = walk(&srv, &cookie, "/inbox?project=shop+%26+co").await;
    let mut all = pages.concat();
    all.sort_unstable();
    assert_eq!(all, (200..260).collect::<Vec<_>>(), "the project's pages");

    // A cursor the feed never wrote: a 400 page that leads back to the feed.
    for bad in [
        "after=",
        "after=garbage",
        "after=12.not-a-uuid",
        "after=-5.0191e7a0-0000-7000-8000-000000000000",
        "after=99999999999999999999.0191e7a0-0000-7000-8000-000000000000",
        "after=253402300800000.0191e7a0-0000-7000-8000-000000000000",
        "after=1.0191e7a0-0000-7000-8000-000000000000%00",
        "project=x&after=1.2.3",
    ] {
        let (status, html) = get(&srv.base, &format!("/inbox?{bad}"), &cookie).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {html}");
        assert!(html.contains("This page link is broken"), "{bad}: {html}");
        assert!(html.contains(r#"href="/inbox""#), "{bad}: {html}");
    }
    // One well formed but made up is only a place in the list: from the start of time,
    // everything; from the end of time, nothing.
    let (status, html) = get(
        &srv.base,
        "/inbox?after=0.00000000-0000-0000-0000-000000000000",
        &cookie,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{html}");
    let mut first = numbers(&html);
    first.sort_unstable();
    assert_eq!(first, (0..PAGE as u32).collect::<Vec<_>>(), "{html}");
    let (status, html) = get(
        &srv.base,
        "/inbox?after=253402300799999.ffffffff-ffff-ffff-ffff-ffffffffffff",
        &cookie,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{html}");
    assert!(numbers(&html).is_empty(), "{html}");
    srv.stop().await;
}

#[tokio::test]
async fn sqlite_every_pending_item_is_reached_once_in_order() {
    let db = common::db::fresh_sqlite_url();
    every_pending_item_is_reached_once_in_order(&db.url).await;
}

#[tokio::test]
async fn postgres_every_pending_item_is_reached_once_in_order() {
    let Some(db) = common::db::fresh_pg_url().await else {
        return;
    };
    every_pending_item_is_reached_once_in_order(&db.url).await;
}
