//! Waits through the proxies: a long-poll, an MCP call and an event stream held past the 60 s
//! after which proxies' defaults give up on a quiet upstream (nginx's proxy_read_timeout),
//! and events delivered one by one as they happen, not held in a buffer.

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::stack::{Proxy, Stack};
use super::support::{Events, answer_yes, ask, call, mcp};

/// Longer than nginx's default proxy_read_timeout (60 s), for real: no setting is shortened.
const PARKED: Duration = Duration::from_secs(65);

async fn long_waits_are_answered(proxy: Proxy) {
    let Some(stack) = Stack::start(proxy, &[]).await else {
        return;
    };
    let handle = ask(&stack, "Deploy to production?").await;
    let id = handle["decision_id"].as_str().unwrap().to_string();
    let mut events = Events::open(&stack).await;

    // The long-poll and the MCP call park on the same decision, side by side.
    let started = Instant::now();
    let long_poll = {
        let req = stack
            .client()
            .get(stack.url(&format!("/v1/decisions/{id}/await?timeout_s=120")))
            .bearer_auth(&stack.sayso.key);
        tokio::spawn(async move {
            let resp = req.send().await.expect("the long-poll is answered");
            let status = resp.status();
            (
                status,
                resp.json::<Value>().await.unwrap_or_default(),
                Instant::now(),
            )
        })
    };
    let client = mcp(&stack).await;
    let mcp_call = {
        let id = id.clone();
        tokio::spawn(async move {
            let d = call(
                &client,
                "await_decision",
                json!({"decision_id": id, "timeout_s": 120}),
            )
            .await;
            let _ = client.cancel().await;
            (d, Instant::now())
        })
    };

    tokio::time::sleep(PARKED).await;
    assert!(
        !long_poll.is_finished(),
        "the long-poll ended before the answer"
    );
    assert!(
        !mcp_call.is_finished(),
        "the MCP call ended before the answer"
    );
    let answered = Instant::now();
    answer_yes(&stack, &handle).await;

    let (status, d, returned) = long_poll.await.unwrap();
    assert_eq!(status, StatusCode::OK, "{d}");
    assert_eq!(d["status"], "answered", "{d}");
    assert_eq!(d["outcome"], true);
    let (m, mcp_returned) = mcp_call.await.unwrap();
    assert_eq!(m["status"], "answered", "{m}");
    let event = events.next_resolved(Duration::from_secs(5)).await;
    assert_eq!(event["decision_id"], id.as_str(), "{event}");
    assert!(returned.duration_since(answered) < Duration::from_secs(5));
    assert!(mcp_returned.duration_since(answered) < Duration::from_secs(5));
    eprintln!(
        "{proxy:?}: long-poll and MCP await_decision parked {:.1} s, answered {:.0} ms and {:.0} ms \
         after the answer",
        answered.duration_since(started).as_secs_f64(),
        returned.duration_since(answered).as_secs_f64() * 1000.0,
        mcp_returned.duration_since(answered).as_secs_f64() * 1000.0,
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_poll_and_an_mcp_call_parked_past_60_s_are_answered_through_caddy() {
    long_waits_are_answered(Proxy::Caddy).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_poll_and_an_mcp_call_parked_past_60_s_are_answered_through_nginx() {
    long_waits_are_answered(Proxy::Nginx).await;
}

/// Each event must arrive before the next answer is even given: a proxy that buffers would
/// hold the first back until the buffer filled or the stream ended.
async fn events_arrive_as_they_happen(proxy: Proxy) {
    let Some(stack) = Stack::start(proxy, &[]).await else {
        return;
    };
    let first = ask(&stack, "First?").await;
    let second = ask(&stack, "Second?").await;
    let mut events = Events::open(&stack).await;
    for handle in [&first, &second] {
        let answered = Instant::now();
        answer_yes(&stack, handle).await;
        let event = events.next_resolved(Duration::from_secs(3)).await;
        assert_eq!(event["decision_id"], handle["decision_id"], "{event}");
        eprintln!(
            "{proxy:?}: event {:.0} ms after the answer",
            answered.elapsed().as_secs_f64() * 1000.0
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_arrive_one_by_one_through_caddy() {
    events_arrive_as_they_happen(Proxy::Caddy).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_arrive_one_by_one_through_nginx() {
    events_arrive_as_they_happen(Proxy::Nginx).await;
}
