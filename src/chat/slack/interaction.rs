//! What a person did in Slack, read from an interaction payload (the `payload=` form field of
//! a request to the interactivity URL, or an `interactive` envelope in Socket Mode): a button
//! pressed (`block_actions`) or a modal submitted (`view_submission`).
//!
//! Only what sayso acts on is read. Who acted is `user.id`, as Slack gives it; nothing else in
//! the payload (a name, the message's text) stands for a person.

use serde_json::Value;

use uuid::Uuid;

use super::blocks::{ANSWER, DENY_MODAL, OPEN, REASON_INPUT, REPLY, TEXT_INPUT, TEXT_MODAL};
use crate::domain::chat::parse_button_value;

/// One thing a person did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Interaction {
    /// An answer button: the decision and the button's code.
    Answer {
        press: Press,
        decision: Uuid,
        code: String,
    },
    /// The button that opens the text answer's modal.
    OpenReply { press: Press, decision: Uuid },
    /// A modal submitted: the text modal's answer, or the Deny modal's (optional) reason.
    Submit {
        user: String,
        decision: Uuid,
        kind: ModalKind,
        text: String,
    },
    /// Nothing to do: a link button's press (Slack reports it too), another app's action.
    Ignored(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModalKind {
    Text,
    Deny,
}

/// Who pressed, and where a private reply or a modal goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Press {
    /// Slack's user id of who pressed (`U…`/`W…`).
    pub user: String,
    /// Opens a modal within 3 s of the press.
    pub trigger_id: Option<String>,
    /// Takes an ephemeral reply for 30 minutes.
    pub response_url: Option<String>,
    /// The conversation and the message pressed in.
    pub channel: Option<String>,
    pub message_ts: Option<String>,
}

/// The JSON of a form body's `payload` field (what Slack posts to the interactivity URL).
pub fn form_payload(body: &[u8]) -> Result<Value, String> {
    let payload = url::form_urlencoded::parse(body)
        .find(|(k, _)| k == "payload")
        .map(|(_, v)| v.into_owned())
        .ok_or("the body has no payload field")?;
    serde_json::from_str(&payload).map_err(|e| format!("the payload is not JSON: {e}"))
}

/// Reads an interaction payload.
pub fn read(payload: &Value) -> Result<Interaction, String> {
    let kind = payload["type"].as_str().ok_or("the payload has no type")?;
    let user = payload["user"]["id"]
        .as_str()
        .filter(|u| !u.is_empty())
        .ok_or("the payload has no user.id")?
        .to_string();
    match kind {
        "block_actions" => read_press(payload, user),
        "view_submission" => read_submission(payload, user),
        other => Ok(Interaction::Ignored(format!("a {other} interaction"))),
    }
}

fn read_press(payload: &Value, user: String) -> Result<Interaction, String> {
    let action = payload["actions"]
        .get(0)
        .ok_or("the block_actions payload has no action")?;
    let action_id = action["action_id"].as_str().unwrap_or_default();
    let text = |v: &Value| v.as_str().filter(|s| !s.is_empty()).map(str::to_string);
    let press = Press {
        user,
        trigger_id: text(&payload["trigger_id"]),
        response_url: text(&payload["response_url"]),
        channel: text(&payload["channel"]["id"])
            .or_else(|| text(&payload["container"]["channel_id"])),
        message_ts: text(&payload["container"]["message_ts"])
            .or_else(|| text(&payload["message"]["ts"])),
    };
    let value = || {
        action["value"]
            .as_str()
            .and_then(parse_button_value)
            .ok_or_else(|| format!("the button {action_id} carries no decision"))
    };
    if let Some(code) = action_id.strip_prefix(ANSWER) {
        let (decision, carried) = value()?;
        // The code is the value's; the action id only repeats it.
        if carried != code {
            return Err(format!(
                "the button {action_id} carries another answer ({carried})"
            ));
        }
        return Ok(Interaction::Answer {
            press,
            decision,
            code: carried,
        });
    }
    match action_id {
        REPLY => Ok(Interaction::OpenReply {
            press,
            decision: value()?.0,
        }),
        OPEN => Ok(Interaction::Ignored("the page's link was opened".into())),
        other => Ok(Interaction::Ignored(format!(
            "an action of another app ({other})"
        ))),
    }
}

fn read_submission(payload: &Value, user: String) -> Result<Interaction, String> {
    let view = &payload["view"];
    let (kind, input) = match view["callback_id"].as_str().unwrap_or_default() {
        TEXT_MODAL => (ModalKind::Text, TEXT_INPUT),
        DENY_MODAL => (ModalKind::Deny, REASON_INPUT),
        other => {
            return Ok(Interaction::Ignored(format!(
                "a modal of another app ({other})"
            )));
        }
    };
    let (decision, _) = view["private_metadata"]
        .as_str()
        .and_then(parse_button_value)
        .ok_or("the modal carries no decision")?;
    let text = view["state"]["values"][input][input]["value"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    Ok(Interaction::Submit {
        user,
        decision,
        kind,
        text,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::domain::chat::button_value;

    fn id() -> Uuid {
        Uuid::parse_str("0190f0c4-5f4b-7d3e-9a1b-2c3d4e5f6a7b").unwrap()
    }

    /// A block_actions payload as Slack sends it (trimmed to what sayso reads and a little).
    fn press(action_id: &str, value: &str) -> Value {
        json!({
            "type": "block_actions",
            "user": {"id": "U0ANA", "username": "ana", "name": "ana", "team_id": "T1"},
            "api_app_id": "A1",
            "token": "legacy",
            "container": {"type": "message", "message_ts": "1712.0001", "channel_id": "D0ANA", "is_ephemeral": false},
            "trigger_id": "123.456.abc",
            "team": {"id": "T1", "domain": "acme"},
            "channel": {"id": "D0ANA", "name": "directmessage"},
            "message": {"type": "message", "ts": "1712.0001", "text": "q"},
            "response_url": "https://hooks.slack.com/actions/T1/1/xyz",
            "actions": [{
                "action_id": action_id, "block_id": "sayso.x", "value": value,
                "type": "button", "action_ts": "1712.0002",
                "text": {"type": "plain_text", "text": "Allow"},
            }],
        })
    }

    #[test]
    fn a_press_names_the_decision_and_who_pressed() {
        let i = read(&press("sayso.answer.a", &button_value(id(), "a"))).unwrap();
        let Interaction::Answer {
            press,
            decision,
            code,
        } = i
        else {
            panic!("{i:?}")
        };
        assert_eq!((decision, code.as_str()), (id(), "a"));
        assert_eq!(press.user, "U0ANA");
        assert_eq!(press.channel.as_deref(), Some("D0ANA"));
        assert_eq!(press.message_ts.as_deref(), Some("1712.0001"));
        assert_eq!(press.trigger_id.as_deref(), Some("123.456.abc"));
    }

    #[test]
    fn a_value_that_disagrees_with_its_button_is_refused() {
        let err = read(&press("sayso.answer.d", &button_value(id(), "a"))).unwrap_err();
        assert!(err.contains("another answer"), "{err}");
        let err = read(&press("sayso.answer.a", "not-a-value")).unwrap_err();
        assert!(err.contains("carries no decision"), "{err}");
        let mut no_user = press("sayso.answer.a", &button_value(id(), "a"));
        no_user["user"] = json!({"name": "ana"});
        assert!(read(&no_user).unwrap_err().contains("user.id"));
    }

    #[test]
    fn links_and_other_apps_are_ignored() {
        assert!(matches!(
            read(&press(OPEN, "")).unwrap(),
            Interaction::Ignored(_)
        ));
        assert!(matches!(
            read(&press("x", "")).unwrap(),
            Interaction::Ignored(_)
        ));
        let i = read(&press(REPLY, &button_value(id(), "text"))).unwrap();
        assert!(matches!(i, Interaction::OpenReply { decision, .. } if decision == id()));
    }

    #[test]
    fn a_submission_carries_its_text() {
        let payload = json!({
            "type": "view_submission",
            "user": {"id": "U0ANA"},
            "view": {
                "id": "V1", "callback_id": "sayso.deny",
                "private_metadata": button_value(id(), "d"),
                "state": {"values": {"reason": {"reason": {"type": "plain_text_input", "value": "not on Friday"}}}},
            },
        });
        assert_eq!(
            read(&payload).unwrap(),
            Interaction::Submit {
                user: "U0ANA".into(),
                decision: id(),
                kind: ModalKind::Deny,
                text: "not on Friday".into()
            }
        );
        // An optional input left empty comes as null.
        let mut empty = payload.clone();
        empty["view"]["state"]["values"]["reason"]["reason"]["value"] = Value::Null;
        assert!(
            matches!(read(&empty).unwrap(), Interaction::Submit { text, .. } if text.is_empty())
        );
    }

    #[test]
    fn the_form_body_is_read() {
        let body = format!(
            "payload={}",
            url::form_urlencoded::byte_serialize(br#"{"type":"block_actions"}"#)
                .collect::<String>()
        );
        assert_eq!(
            form_payload(body.as_bytes()).unwrap()["type"],
            "block_actions"
        );
        assert!(form_payload(b"x=1").unwrap_err().contains("no payload"));
        assert!(
            form_payload(b"payload=%7B")
                .unwrap_err()
                .contains("not JSON")
        );
    }
}
