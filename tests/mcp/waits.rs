//! Long waits: an await longer than the server's maximum keeps waiting in rounds, and a
//! cancelled call withdraws its question and nothing else.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn await_decision_longer_than_the_servers_maximum_keeps_waiting_in_rounds() {
    let db = common::db::fresh_sqlite_url();
    let srv = TestServer::start_max_await(&db.url, std::time::Duration::from_secs(1)).await;
    let client = connect(&srv).await;
    let (asked, id) = ask_user(&client, json!({"question": "Ship it?", "kind": "bool"})).await;
    // Answered after the first one-second round has ended: only a wait that goes on past
    // the server's maximum sees it.
    let answering = answer_later(
        &srv,
        s(ok(&asked), "web_url").to_string(),
        Duration::from_millis(2500),
        json!({"value": "yes"}),
    );
    let awaited = await_decision(&client, &id, 30).await;
    assert_eq!(answering.await.unwrap(), StatusCode::OK);
    assert_eq!(ok(&awaited)["status"], "answered", "{}", text(&awaited));
    assert_eq!(ok(&awaited)["outcome"], true);
    client.cancel().await.unwrap();
}

/// The status of decision `id`, once it is no longer pending or 20 s have passed.
async fn settled_status(srv: &TestServer, id: &str) -> Value {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let (_, d) = send(srv.req(Method::GET, &format!("/v1/decisions/{id}"))).await;
        if d["status"] != "pending" || std::time::Instant::now() > deadline {
            return d;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Calls tool `name` without waiting for its result; the handle that can cancel the call.
async fn call_cancellable(
    client: &Client,
    name: &str,
    args: Value,
) -> rmcp::service::RequestHandle<RoleClient> {
    let Value::Object(args) = args else {
        panic!("arguments must be an object")
    };
    let request = ClientRequest::CallToolRequest(rmcp::model::CallToolRequest::new(
        CallToolRequestParams::new(name.to_string()).with_arguments(args),
    ));
    client
        .peer()
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_call_withdraws_the_question_it_waited_on_and_nothing_else() {
    let (_db, srv) = fresh_server().await;
    let client = connect_stdio(&srv).await;

    // A handle only: the model holds its decision_id, and awaits it later.
    let (_, kept) = ask_user(&client, json!({"question": "Kept?", "kind": "bool"})).await;

    // A wait on someone else's decision: cancelling it leaves the decision alone.
    let waiting = call_cancellable(
        &client,
        "await_decision",
        json!({"decision_id": kept, "timeout_s": 600}),
    )
    .await;
    // The tools that ask and wait in the call: their client's `notifications/cancelled`
    // withdraws what they asked, since no one will ever read its decision_id.
    let approving = call_cancellable(
        &client,
        "approve",
        json!({"tool_name": "Bash", "input": {"command": "make cancelled"}, "wait_s": 600}),
    )
    .await;
    let asking = call_cancellable(
        &client,
        "ask_user_question",
        json!({"questions": [{"question": "Which colour?", "header": "Colour",
            "multiSelect": false, "options": [
                {"label": "Red", "description": "warm"},
                {"label": "Blue", "description": "cool"}]}],
            "wait_s": 600}),
    )
    .await;
    let approval = srv
        .pending_asking("Claude Code wants to run: make cancelled")
        .await;
    let question = srv.pending_asking("Which colour?").await;
    waiting.cancel(Some("not now".into())).await.unwrap();
    approving
        .cancel(Some("the user pressed Esc".into()))
        .await
        .unwrap();
    asking.cancel(None).await.unwrap();
    for d in [&approval, &question] {
        let id = s(d, "decision_id");
        let after = settled_status(&srv, id).await;
        assert_eq!(after["status"], "cancelled", "{after}");
        let (_, events) = send(srv.req(Method::GET, &format!("/v1/decisions/{id}/events"))).await;
        assert!(
            events.to_string().contains(r#""reason":"abandoned""#),
            "{events}"
        );
    }
    // The handle's decision is still open, and the bridge still serves.
    let got = call(&client, "get_decision", json!({"decision_id": kept})).await;
    assert_eq!(ok(&got)["status"], "pending");
    client.cancel().await.unwrap();
    let after = settled_status(&srv, &kept).await;
    assert_eq!(
        after["status"], "pending",
        "closing the bridge withdraws no handle"
    );
}
