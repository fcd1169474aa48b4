//! sayso's server with Slack on, against the stand-in, and what a test reads off it.

use super::*;

/// A server with Slack on (interactivity URL, or Socket Mode), its stand-in, and Slack's SDK.
pub(super) struct Slack {
    pub(super) srv: common::server::TestServer,
    pub(super) standin: SlackStandIn,
    pub(super) python: &'static PathBuf,
    /// The test's own database, removed when it is dropped.
    pub(super) _db: Box<dyn std::any::Any + Send + Sync>,
}

impl Slack {
    /// `None` (after a loud SKIPPED) when slack_sdk cannot be installed, outside CI.
    pub(super) async fn start(socket_mode: bool) -> Option<Slack> {
        let db = common::db::fresh_sqlite_url();
        let url = db.url.clone();
        Self::start_on(socket_mode, Box::new(db), &url).await
    }

    /// The same on a fresh PostgreSQL database; `None` when there is none to be had.
    pub(super) async fn start_on_postgres() -> Option<Slack> {
        let db = common::db::fresh_pg_url().await?;
        let url = db.url.clone();
        Self::start_on(false, Box::new(db), &url).await
    }

    pub(super) async fn start_on(
        socket_mode: bool,
        db: Box<dyn std::any::Any + Send + Sync>,
        url: &str,
    ) -> Option<Slack> {
        let python = slack_sdk()?;
        let standin = SlackStandIn::start().await;
        let chats = sayso::chat::ChatSettings {
            slack: Some(sayso::chat::SlackSettings {
                bot_token: BOT_TOKEN.into(),
                signing_secret: Some(SIGNING_SECRET.into()),
                app_token: socket_mode.then(|| APP_TOKEN.into()),
                api_url: standin.api_url.parse().unwrap(),
            }),
            ..Default::default()
        };
        let srv = common::server::TestServer::start_chatting(url, chats).await;
        Some(Slack {
            srv,
            standin,
            python,
            _db: db,
        })
    }

    /// Adds a person with a Slack user id (none for `None`).
    pub(super) async fn person(
        &self,
        name: &str,
        slack: Option<&str>,
    ) -> sayso::domain::people::Person {
        let mut p = self.srv.add_person(name).await;
        p.chats.slack = slack.map(str::to_string);
        self.srv.svc.store().update_person(&p).await.unwrap();
        p
    }

    pub(super) async fn create(&self, body: Value) -> String {
        let h = self.srv.create(body).await;
        h["decision_id"]
            .as_str()
            .unwrap_or_else(|| panic!("not created: {h}"))
            .to_string()
    }

    pub(super) async fn decision(&self, id: &str) -> Value {
        self.srv.get(id).await
    }

    /// Waits until the decision's status is `status`.
    pub(super) async fn wait_status(&self, id: &str, status: &str) -> Value {
        for _ in 0..200 {
            let d = self.decision(id).await;
            if d["status"] == status {
                return d;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("{id} never became {status}: {}", self.decision(id).await);
    }

    /// Posts a form body to the interactivity URL with the headers given.
    pub(super) async fn post_raw(&self, body: &str, ts: &str, signature: &str) -> (u16, String) {
        let resp = self
            .srv
            .client
            .post(self.srv.url("/chat/slack/interactivity"))
            .header("content-type", "application/x-www-form-urlencoded")
            .header("x-slack-request-timestamp", ts)
            .header("x-slack-signature", signature)
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        (resp.status().as_u16(), resp.text().await.unwrap())
    }

    /// Sends `payload` as Slack does: form-encoded, signed now with slack_sdk. Returns the
    /// status, the answer, and what was sent (to replay it).
    pub(super) async fn send(&self, payload: &Value) -> (u16, String, (String, String, String)) {
        let body = form(payload);
        let ts = now().to_string();
        let signature = sdk_sign(self.python, SIGNING_SECRET, &ts, &body);
        let (status, text) = self.post_raw(&body, &ts, &signature).await;
        (status, text, (body, ts, signature))
    }

    /// Presses the button labelled `label` (its start) on `message`, as `user`.
    pub(super) async fn press(
        &self,
        message: &Posted,
        label: &str,
        user: &str,
    ) -> (u16, String, (String, String, String)) {
        let payload = block_actions(&self.standin, message, button(message, label), user);
        self.send(&payload).await
    }

    /// Submits the last modal sayso opened, as `user`, with `text` in its field.
    pub(super) async fn submit(&self, user: &str, text: Option<&str>) -> (u16, String) {
        let view = self
            .standin
            .calls_to("views.open")
            .last()
            .expect("a modal was opened")
            .body["view"]
            .clone();
        let (status, answer, _) = self.send(&view_submission(&view, user, text)).await;
        (status, answer)
    }

    /// Nothing sayso sent broke Slack's shapes, by the stand-in's checks and slack_sdk's.
    pub(super) fn assert_well_formed(&self) {
        assert_eq!(self.standin.problems(), Vec::<String>::new());
        assert_eq!(
            sdk_problems(self.python, &sent_items(&self.standin)),
            Vec::<String>::new()
        );
    }
}

pub(super) fn form(payload: &Value) -> String {
    format!(
        "payload={}",
        url::form_urlencoded::byte_serialize(payload.to_string().as_bytes()).collect::<String>()
    )
}

/// The button whose text starts with `label`.
pub(super) fn button<'a>(message: &'a Posted, label: &str) -> &'a Value {
    message
        .blocks
        .iter()
        .filter(|b| b["type"] == "actions")
        .flat_map(|b| b["elements"].as_array().unwrap())
        .find(|e| {
            e["text"]["text"]
                .as_str()
                .unwrap_or_default()
                .starts_with(label)
        })
        .unwrap_or_else(|| panic!("no button {label:?} in {:#?}", message.blocks))
}

/// Waits until the message `ts` shows `text`, and returns it as it is now.
pub(super) async fn showing(standin: &SlackStandIn, what: &str, ts: &str, text: &str) -> Posted {
    standin
        .wait_for(what, |s| {
            s.messages()
                .into_iter()
                .find(|m| m.ts == ts && shown_text(m).contains(text))
        })
        .await
}

/// Waits until the messages `ts` all show `text` at once.
pub(super) async fn all_showing(standin: &SlackStandIn, what: &str, ts: &[&str], text: &str) {
    standin
        .wait_for(what, |s| {
            let messages = s.messages();
            let all = ts.iter().all(|&ts| {
                messages
                    .iter()
                    .any(|m| m.ts == ts && shown_text(m).contains(text))
            });
            all.then_some(())
        })
        .await
}

/// The texts of a message's blocks, joined: what the person reads.
pub(super) fn shown_text(message: &Posted) -> String {
    fn walk(v: &Value, out: &mut String) {
        match v {
            Value::Object(o) => {
                if let Some(Value::String(t)) = o.get("text") {
                    out.push_str(t);
                    out.push('\n');
                }
                o.values().for_each(|x| walk(x, out));
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    let mut out = String::new();
    walk(&json!(message.blocks), &mut out);
    out
}

/// A block_actions payload as Slack sends it when `user` presses `button` on `message`.
pub(super) fn block_actions(
    standin: &SlackStandIn,
    message: &Posted,
    button: &Value,
    user: &str,
) -> Value {
    json!({
        "type": "block_actions",
        "user": {"id": user, "username": user.to_lowercase(), "name": user.to_lowercase(), "team_id": crate::slack_standin::TEAM},
        "api_app_id": "A0SAYSO",
        "token": "legacy-verification-token",
        "container": {"type": "message", "message_ts": message.ts, "channel_id": message.channel, "is_ephemeral": false},
        "trigger_id": standin.trigger(),
        "team": {"id": crate::slack_standin::TEAM, "domain": "acme"},
        "enterprise": null,
        "is_enterprise_install": false,
        "channel": {"id": message.channel, "name": "directmessage"},
        "message": {"type": "message", "user": "U0SAYSOBOT", "ts": message.ts, "bot_id": "B0SAYSO", "text": message.text, "blocks": message.blocks},
        "state": {"values": {}},
        "response_url": standin.response_url(),
        "actions": [{
            "action_id": button["action_id"], "block_id": "b", "text": button["text"],
            "value": button["value"], "type": "button", "action_ts": format!("{}.000200", now()),
        }],
    })
}

/// A view_submission payload for `view` (as sayso opened it), its one input holding `text`.
pub(super) fn view_submission(view: &Value, user: &str, text: Option<&str>) -> Value {
    let input = view["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "input")
        .unwrap();
    let (block, action) = (
        input["block_id"].as_str().unwrap(),
        input["element"]["action_id"].as_str().unwrap(),
    );
    let mut submitted = view.clone();
    submitted["id"] = json!("V0SAYSO");
    submitted["team_id"] = json!(crate::slack_standin::TEAM);
    submitted["state"] =
        json!({"values": {block: {action: {"type": "plain_text_input", "value": text}}}});
    submitted["hash"] = json!("1712000000.abc");
    submitted["app_id"] = json!("A0SAYSO");
    json!({
        "type": "view_submission",
        "team": {"id": crate::slack_standin::TEAM, "domain": "acme"},
        "user": {"id": user, "username": user.to_lowercase(), "name": user.to_lowercase(), "team_id": crate::slack_standin::TEAM},
        "api_app_id": "A0SAYSO",
        "token": "legacy-verification-token",
        "trigger_id": format!("{}.1.abc", now()),
        "view": submitted,
        "response_urls": [],
        "is_enterprise_install": false,
    })
}

pub(super) fn approval(command: &str, approvers: &[&str]) -> Value {
    json!({
        "question": "Run a command?", "kind": "choose", "options": ["Allow", "Deny"],
        "project": "shop",
        "approval": {"harness": "claude", "tool_name": "Bash", "tool_input": {"command": command}},
        "approvers": approvers,
    })
}
