//! The pages of a decision sent to people by name, over plain HTTP: each person's own link
//! (`/a/…`) opens the answer page, shows how far a decision that needs several has come,
//! takes their answer once, and names who answered; the decision's own link only shows it;
//! the feed says whose it is. (tests/browser/people.rs drives the same pages in Chromium.)

mod common;

use common::forms::{form_post, no_redirects};
use common::people::{add_people, feed_link};
use common::server::{TestServer, fresh_server, s, send};
use reqwest::StatusCode;
use serde_json::{Value, json};

use sayso::domain::people::Person;

/// `person`'s own link to the decision of `handle`, as their feed gives it.
async fn link(srv: &TestServer, handle: &Value, person: &Person) -> String {
    feed_link(srv, s(handle, "decision_id"), person.id).await
}

async fn page(url: &str) -> (StatusCode, String) {
    let resp = no_redirects().get(url).send().await.unwrap();
    (resp.status(), resp.text().await.unwrap())
}

/// The names of the people who answered, in order.
fn names(d: &Value) -> Vec<String> {
    d["answers"]
        .as_array()
        .unwrap_or(&Vec::new())
        .iter()
        .map(|a| a["person"].as_str().unwrap_or("?").to_string())
        .collect()
}

/// The page offers the bool's buttons.
fn has_buttons(html: &str) -> bool {
    html.contains(r#"<form id="answer""#) && html.contains(r#"name="value" value="yes""#)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_people_answer_from_their_own_links_and_the_page_counts_them() {
    let (_db, srv) = fresh_server().await;
    let people = add_people(&srv, &["ana", "ben", "cy"]).await;
    let (ana, ben, cy) = (&people[0], &people[1], &people[2]);
    let h = srv
        .create(json!({"question": "Ship the release?", "kind": "bool",
                        "approvers": ["ana", "ben"], "required": 2}))
        .await;
    let id = s(&h, "decision_id");
    let ana_link = link(&srv, &h, ana).await;
    let ben_link = link(&srv, &h, ben).await;

    // Ana's link opens the answer page, posting to itself, with how far it has come.
    let (status, html) = page(&ana_link).await;
    assert_eq!(status, StatusCode::OK, "{html}");
    assert!(html.contains("Ship the release?"));
    assert!(html.contains("0 of 2 said yes"), "{html}");
    assert!(has_buttons(&html), "{html}");
    let action = url::Url::parse(&ana_link).unwrap().path().to_string();
    assert!(html.contains(&format!(r#"action="{action}""#)), "{html}");

    // The decision's own link only shows it, and says who answers it.
    let (status, html) = page(s(&h, "web_url")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(!html.contains(r#"<form id="answer""#), "{html}");
    assert!(
        html.contains("ana and ben answer this from their sayso feed"),
        "{html}"
    );
    assert!(html.contains("0 of 2 said yes"));

    // Ana says yes: back to her page, which counts her and offers her no more buttons.
    let resp = form_post(&ana_link, "value=yes").await;
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    assert_eq!(resp.headers()["location"].to_str().unwrap(), action);
    let (status, html) = page(&ana_link).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        html.contains("<strong>You said yes.</strong> 1 of 2 said yes: ana"),
        "{html}"
    );
    assert!(!html.contains(r#"<form id="answer""#), "{html}");
    let d = srv.get(id).await;
    assert_eq!(d["status"], "pending");
    assert_eq!(names(&d), ["ana"]);

    // Her Yes again (a second tab) changes nothing.
    let resp = form_post(&ana_link, "value=yes").await;
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    assert_eq!(names(&srv.get(id).await), ["ana"]);

    // Ben still has his buttons, and sees Ana's Yes.
    let (_, html) = page(&ben_link).await;
    assert!(has_buttons(&html), "{html}");
    assert!(html.contains("1 of 2 said yes: ana"));
    assert!(!html.contains("You said yes."));

    // Ben's Yes resolves it; both pages name who answered.
    let resp = form_post(&ben_link, "value=yes").await;
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    let d = srv.get(id).await;
    assert_eq!(d["status"], "answered", "{d}");
    assert_eq!(d["outcome"], true);
    assert_eq!(names(&d), ["ana", "ben"]);
    for url in [&ana_link, &ben_link, &s(&h, "web_url").to_string()] {
        let (status, html) = page(url).await;
        assert_eq!(status, StatusCode::OK);
        assert!(html.contains(r#"data-status="answered""#), "{html}");
        assert!(html.contains("Answered by ana and ben"), "{html}");
        assert!(!html.contains(r#"<form id="answer""#));
    }

    // The decision's own link takes no answer, as JSON or as a form.
    let (status, body) = send(
        srv.client
            .post(s(&h, "web_url"))
            .json(&json!({"value": "no"})),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["error"]["code"], "answer_elsewhere");
    let resp = form_post(s(&h, "web_url"), "value=no").await;
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
    assert!(resp.text().await.unwrap().contains("nothing was changed"));

    // Cy is not asked: a link made for him opens nothing.
    let h2 = srv
        .create(json!({"question": "Rotate the keys?", "kind": "bool",
                        "approvers": ["ana", "ben"], "required": 2}))
        .await;
    let cy_link = link(&srv, &h2, cy).await;
    let (status, html) = page(&cy_link).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(html.contains("Link not found"));
    let resp = form_post(&cy_link, "value=yes").await;
    assert_eq!(resp.status(), StatusCode::NOT_FOUND);
    assert_eq!(
        names(&srv.get(s(&h2, "decision_id")).await),
        Vec::<String>::new()
    );
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_no_resolves_at_once_and_the_page_names_who_said_it() {
    let (_db, srv) = fresh_server().await;
    let people = add_people(&srv, &["ana", "ben"]).await;
    let (ana, ben) = (&people[0], &people[1]);
    let h = srv
        .create(json!({"question": "Drop the old table?", "kind": "bool",
                        "approvers": ["ana", "ben"], "required": 2, "allow_remark": true}))
        .await;
    let id = s(&h, "decision_id");
    let resp = form_post(&link(&srv, &h, ben).await, "value=no&remark=not+tonight").await;
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    let d = srv.get(id).await;
    assert_eq!(d["status"], "answered", "{d}");
    assert_eq!(d["outcome"], false);
    assert_eq!(names(&d), ["ben"]);

    // Ana's page: resolved, by Ben, with no buttons; her late Yes is refused.
    let ana_link = link(&srv, &h, ana).await;
    let (status, html) = page(&ana_link).await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains("Answered by ben"), "{html}");
    assert!(html.contains("not tonight"));
    assert!(!html.contains(r#"<form id="answer""#));
    let resp = form_post(&ana_link, "value=yes").await;
    assert_eq!(resp.status(), StatusCode::CONFLICT);
    assert!(resp.text().await.unwrap().contains("Answered by ben"));

    // A decline is a veto too.
    let h = srv
        .create(json!({"question": "Page the on-call?", "kind": "bool",
                        "approvers": ["ana", "ben"], "required": 2}))
        .await;
    let resp = form_post(&link(&srv, &h, ana).await, "action=decline").await;
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    assert_eq!(srv.get(s(&h, "decision_id")).await["status"], "declined");
    let (_, html) = page(&link(&srv, &h, ben).await).await;
    assert!(html.contains("Declined by ana"), "{html}");
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_choice_sent_to_one_person_is_answered_on_their_page() {
    let (_db, srv) = fresh_server().await;
    let people = add_people(&srv, &["ana", "ben"]).await;
    let h = srv
        .create(json!({"question": "Which database?", "kind": "choose",
                        "options": ["PostgreSQL", "SQLite"], "approvers": ["ana"]}))
        .await;
    let ana_link = link(&srv, &h, &people[0]).await;
    let (status, html) = page(&ana_link).await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains(r#"value="SQLite""#), "{html}");
    // One answer resolves it: no count to show.
    assert!(!html.contains(r#"id="progress""#));
    // The decision's own link names the one who answers it.
    let (_, html) = page(s(&h, "web_url")).await;
    assert!(
        html.contains("ana answers this from their sayso feed"),
        "{html}"
    );

    // Ben is not asked: his link opens nothing while it waits.
    let (status, _) = page(&link(&srv, &h, &people[1]).await).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // A post without a choice shows the page again with the problem, still posting here.
    let resp = form_post(&ana_link, "action=answer").await;
    assert_eq!(resp.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let html = resp.text().await.unwrap();
    assert!(html.contains(r#"class="errors""#), "{html}");
    let action = url::Url::parse(&ana_link).unwrap().path().to_string();
    assert!(html.contains(&format!(r#"action="{action}""#)));

    let resp = form_post(&ana_link, "value=SQLite&action=answer").await;
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    let d = srv.get(s(&h, "decision_id")).await;
    assert_eq!(
        (&d["status"], &d["outcome"]),
        (&json!("answered"), &json!("SQLite")),
        "{d}"
    );
    let (_, html) = page(&ana_link).await;
    assert!(html.contains("Answered by ana"), "{html}");
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_feed_says_whose_it_is_and_how_far_each_decision_has_come() {
    let (_db, srv) = fresh_server().await;
    // One person: the feed looks as it always did.
    let (_, html) = common::server::feed_page(&srv.feed_url().await).await;
    assert!(html.contains("Inbox · default"), "{html}");

    let people = add_people(&srv, &["ana", "ben"]).await;
    let h = srv
        .create(json!({"question": "Ship the release?", "kind": "bool",
                        "approvers": ["ana", "ben"], "required": 2}))
        .await;
    let feed_of = |p: &Person| {
        let token = srv.svc.tokens().feed_token(p.id);
        srv.url(&format!("/inbox/{token}"))
    };
    let (status, html) = common::server::feed_page(&feed_of(&people[0])).await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains("ana · inbox default"), "{html}");
    assert!(html.contains("0 of 2 said yes"), "{html}");
    let ana_link = link(&srv, &h, &people[0]).await;
    let path = url::Url::parse(&ana_link).unwrap().path().to_string();
    assert!(html.contains(&format!(r#"href="{path}""#)), "{html}");

    let resp = form_post(&ana_link, "value=yes").await;
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    let (_, html) = common::server::feed_page(&feed_of(&people[1])).await;
    assert!(html.contains("ben · inbox default"));
    assert!(html.contains("1 of 2 said yes: ana"), "{html}");
    // The inbox's own person is one of several now: named too.
    let (_, html) = common::server::feed_page(&srv.feed_url().await).await;
    assert!(html.contains("default · inbox default"), "{html}");
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_approval_for_two_counts_each_allow_on_its_page() {
    let (_db, srv) = fresh_server().await;
    let people = add_people(&srv, &["ana", "ben"]).await;
    let (ana, ben) = (&people[0], &people[1]);
    let h = srv
        .create(json!({"question": "Run a command?", "kind": "choose",
                        "options": ["Allow", "Deny"],
                        "approval": {"harness": "claude", "tool_name": "Bash",
                                     "tool_input": {"command": "cargo publish"}},
                        "approvers": ["ana", "ben"], "required": 2}))
        .await;
    let id = s(&h, "decision_id");
    let ana_link = link(&srv, &h, ana).await;
    let (status, html) = page(&ana_link).await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains("0 of 2 allowed"), "{html}");
    assert!(html.contains(r#"id="allow""#));
    let (_, html) = page(s(&h, "web_url")).await;
    assert!(
        html.contains("ana and ben answer this from their sayso feed"),
        "{html}"
    );
    assert!(!html.contains(r#"id="allow""#));

    let resp = form_post(&ana_link, "value=Allow").await;
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    let d = srv.get(id).await;
    assert_eq!(d["status"], "pending", "{d}");
    let (_, html) = page(&ana_link).await;
    assert!(
        html.contains("<strong>You allowed.</strong> 1 of 2 allowed: ana"),
        "{html}"
    );
    assert!(!html.contains(r#"id="allow""#), "{html}");

    let resp = form_post(&link(&srv, &h, ben).await, "value=Allow").await;
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    let d = srv.get(id).await;
    assert_eq!(
        (&d["status"], &d["outcome"]),
        (&json!("answered"), &json!("Allow")),
        "{d}"
    );
    let (_, html) = page(&ana_link).await;
    assert!(html.contains("Allowed by ana and ben"), "{html}");

    // A Deny from either is a veto.
    let h = srv
        .create(json!({"question": "Run a command?", "kind": "choose",
                        "options": ["Allow", "Deny"],
                        "approval": {"harness": "claude", "tool_name": "Bash",
                                     "tool_input": {"command": "rm -rf target"}},
                        "approvers": ["ana", "ben"], "required": 2}))
        .await;
    let resp = form_post(&link(&srv, &h, ben).await, "value=Deny").await;
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    let d = srv.get(s(&h, "decision_id")).await;
    assert_eq!(
        (&d["status"], &d["outcome"]),
        (&json!("answered"), &json!("Deny")),
        "{d}"
    );
    let (_, html) = page(&link(&srv, &h, ana).await).await;
    assert!(html.contains("Denied by ben"), "{html}");
    srv.stop().await;
}
