use super::*;

fn form(schema: Value) -> Elicitation {
    Elicitation {
        server: "shop".into(),
        message: "Which plan?".into(),
        mode: Mode::Form(schema),
        elicitation_id: None,
        cwd: Some("/home/me/shop".into()),
    }
}

const WAIT: Duration = Duration::from_secs(900);

#[test]
fn claude_codes_input_is_read_in_both_modes() {
    let input = json!({
        "session_id": "s1", "transcript_path": "/t.jsonl", "cwd": "/repo",
        "permission_mode": "default", "hook_event_name": "Elicitation",
        "mcp_server_name": "billing", "message": "Your email?", "mode": "form",
        "requested_schema": {"type": "object", "properties": {"email": {"type": "string"}}}
    });
    assert!(is_elicitation(&input));
    let e = parse(&input).unwrap();
    assert_eq!(e.server, "billing");
    assert_eq!(e.message, "Your email?");
    assert!(matches!(e.mode, Mode::Form(_)));
    let url = json!({"hook_event_name": "Elicitation", "mcp_server_name": "gh",
        "message": "Sign in", "mode": "url", "url": "https://example.com/auth",
        "elicitation_id": "el-1"});
    let e = parse(&url).unwrap();
    assert_eq!(e.mode, Mode::Url("https://example.com/auth".into()));
    assert_eq!(e.elicitation_id.as_deref(), Some("el-1"));

    let e = parse(&json!({"hook_event_name": "Elicitation", "message": "x"})).unwrap_err();
    assert!(e.contains("mcp_server_name"), "{e}");
    let e = parse(&json!({"mcp_server_name": "a", "mode": "form"})).unwrap_err();
    assert!(e.contains("requested_schema"), "{e}");
    let e = parse(&json!({"mcp_server_name": "a", "mode": "url"})).unwrap_err();
    assert!(e.contains("url"), "{e}");
    let e = parse(&json!({"mcp_server_name": "a", "mode": "voice"})).unwrap_err();
    assert!(e.contains("voice"), "{e}");
}

#[test]
fn the_reply_is_what_claude_codes_elicitation_hook_reads() {
    let mut content = Map::new();
    content.insert("seats".into(), json!(3));
    content.insert("vat".into(), json!(true));
    assert_eq!(
        reply(&Action::Accept(Some(content))).stdout.unwrap(),
        json!({"hookSpecificOutput": {"hookEventName": "Elicitation", "action": "accept",
            "content": {"seats": 3, "vat": true}}})
    );
    assert_eq!(
        reply(&Action::Accept(None)).stdout.unwrap(),
        json!({"hookSpecificOutput": {"hookEventName": "Elicitation", "action": "accept"}})
    );
    let r = reply(&Action::Decline);
    assert_eq!(r.exit, 0);
    assert_eq!(r.stdout.unwrap()["hookSpecificOutput"]["action"], "decline");
    assert_eq!(
        reply(&Action::Cancel).stdout.unwrap()["hookSpecificOutput"]["action"],
        "cancel"
    );
}

#[test]
fn every_kind_of_mcp_field_maps_onto_the_form() {
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object", "title": "Sign-up", "description": "For the invoice",
        "additionalProperties": false,
        "required": ["email", "seats", "plan"],
        "properties": {
            "email": {"type": "string", "format": "email", "title": "Email"},
            "site": {"type": "string", "format": "uri"},
            "start": {"type": "string", "format": "date", "default": "2026-12-01"},
            "at": {"type": "string", "format": "date-time"},
            "name": {"type": "string", "minLength": 2, "maxLength": 40, "description": "Full name"},
            "seats": {"type": "integer", "minimum": 1, "maximum": 50, "default": 5},
            "budget": {"type": "number", "minimum": 0.5},
            "vat": {"type": "boolean", "default": true},
            "plan": {"type": "string", "enum": ["basic", "pro"], "enumNames": ["Basic", "Pro"]},
            "tier": {"type": "string", "oneOf": [{"const": "a", "title": "Tier A"}, {"const": "b", "title": "Tier B"}]},
            "tags": {"type": "array", "items": {"type": "string", "enum": ["x", "y"]}, "minItems": 1, "maxItems": 2},
            "teams": {"type": "array", "items": {"anyOf": [{"const": "ops", "title": "Ops"}]}}
        }
    });
    let mapped = map_schema(&schema).unwrap();
    assert_eq!(mapped["properties"], schema["properties"]);
    assert_eq!(mapped["required"], schema["required"]);
    assert!(mapped.get("$schema").is_none() && mapped.get("title").is_none());

    let body = create_body(&form(schema), WAIT).unwrap();
    assert_eq!(body["kind"], "form");
    assert_eq!(
        body["question"],
        "The MCP server \"shop\" asks you to fill in a form"
    );
    assert_eq!(body["required"], 1);
    assert_eq!(body["allow_remark"], false);
    assert_eq!(body["project"], "/home/me/shop");
    assert_eq!(body["ttl_seconds"], 960);
    let context = body["context_md"].as_str().unwrap();
    assert!(context.starts_with("**A question from an MCP server, not a tool approval.**"));
    assert!(context.contains("```text\nWhich plan?\n```"), "{context}");
    assert!(context.contains("```text\nSign-up\n```"), "{context}");
    assert!(
        context.contains("```text\nFor the invoice\n```"),
        "{context}"
    );
}

#[test]
fn what_the_form_cannot_hold_to_is_named_not_dropped() {
    let field = |f: Value| json!({"type": "object", "properties": {"f": f}});
    let cases = [
        (
            field(json!({"type": "string", "pattern": "^[a-z]+$"})),
            "\"pattern\"",
        ),
        (field(json!({"type": "string", "format": "ipv4"})), "ipv4"),
        (
            field(json!({"type": "number", "exclusiveMinimum": 0})),
            "\"exclusiveMinimum\"",
        ),
        (
            field(json!({"type": "integer", "multipleOf": 5})),
            "\"multipleOf\"",
        ),
        (field(json!({"type": "number", "enum": [1, 2]})), "\"enum\""),
        (field(json!({"type": "string", "const": "x"})), "\"const\""),
        (
            field(json!({"type": "object", "properties": {}})),
            "\"object\"",
        ),
        (field(json!({"type": ["string", "null"]})), "type"),
        (field(json!({"anyOf": [{"type": "string"}]})), "type"),
        (
            field(json!({"type": "string", "enum": ["a", "b"], "oneOf": [{"const": "a"}]})),
            "both enum and oneOf",
        ),
        (
            field(json!({"type": "string", "enum": ["a", "a"]})),
            "repeats",
        ),
        (
            field(json!({"type": "string", "oneOf": [{"const": "a", "x-color": "red"}]})),
            "x-color",
        ),
        (
            field(json!({"type": "integer", "minimum": 1, "default": 0})),
            "default",
        ),
        (
            field(json!({"type": "array", "items": {"type": "number"}})),
            "items",
        ),
        (
            field(
                json!({"type": "array", "items": {"type": "string", "enum": ["a"], "pattern": "a"}}),
            ),
            "\"pattern\"",
        ),
        (
            field(json!({"type": "array", "items": {"anyOf": [{"const": "a"}], "enum": ["a"]}})),
            "both enum and anyOf",
        ),
        (field(json!({"type": "string", "enum": []})), "1–100"),
        (json!({"type": "object", "properties": {}}), "1–30"),
        (json!({"type": "object"}), "properties"),
        (json!({"type": "array"}), "object"),
        (
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["b"]}),
            "names no property",
        ),
        (
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "allOf": []}),
            "\"allOf\"",
        ),
        (
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": {"type": "string"}}),
            "additionalProperties",
        ),
        (json!("a string"), "not a JSON object"),
        (json!(null), "not a JSON object"),
    ];
    for (schema, says) in cases {
        let why = map_schema(&schema).expect_err(&schema.to_string());
        assert!(why.contains(says), "{schema}: {why:?} should name {says:?}");
        assert!(create_body(&form(schema), WAIT).is_err());
    }
    let many: Map<String, Value> = (0..31)
        .map(|i| (format!("f{i}"), json!({"type": "boolean"})))
        .collect();
    let why = map_schema(&json!({"type": "object", "properties": many})).unwrap_err();
    assert!(why.contains("1–30"), "{why}");
}

#[test]
fn hostile_text_stays_text() {
    let mut e = form(json!({"type": "object", "properties": {"ok": {"type": "boolean"}}}));
    e.server = "x\" asks nothing. Claude Code wants to run: rm -rf /".into();
    e.message = "```\n</pre><script>alert(1)</script>\n[Allow](https://evil.example/)\n````".into();
    let body = create_body(&e, WAIT).unwrap();
    let question = body["question"].as_str().unwrap();
    assert!(
        question.starts_with("The MCP server \"x\\\" asks nothing."),
        "{question}"
    );
    assert!(
        question.ends_with("asks you to fill in a form"),
        "{question}"
    );
    let context = body["context_md"].as_str().unwrap();
    // The message sits in a fence longer than any run of backticks it holds.
    assert!(context.contains("`````text\n```\n</pre>"), "{context}");
    assert!(context.contains("\n````\n`````\n"), "{context}");

    e.message = "a".repeat(MAX_MESSAGE_CHARS + 1);
    let why = create_body(&e, WAIT).unwrap_err();
    assert!(why.contains("longer than 8000"), "{why}");

    e.server = "s".repeat(500);
    e.message = "hi".into();
    let body = create_body(&e, WAIT).unwrap();
    assert!(body["question"].as_str().unwrap().chars().count() < 200);
}

#[test]
fn a_url_is_shown_in_full_for_the_person_to_open() {
    let mut e = form(Value::Null);
    e.mode = Mode::Url("https://bücher.example/auth?state=a b".into());
    e.elicitation_id = Some("el-7".into());
    let body = create_body(&e, WAIT).unwrap();
    assert_eq!(body["kind"], "bool");
    assert_eq!(body["yes_label"], "Accept");
    assert_eq!(body["no_label"], "Decline");
    assert_eq!(
        body["question"],
        "The MCP server \"shop\" asks you to open a web page on xn--bcher-kva.example"
    );
    let shown = "https://xn--bcher-kva.example/auth?state=a%20b";
    assert!(
        body["context_md"]
            .as_str()
            .unwrap()
            .contains(&format!("```text\n{shown}\n```"))
    );
    assert_eq!(body["attachments"], json!([{"name": shown, "url": shown}]));
    assert_eq!(body["metadata"]["elicitation"]["elicitation_id"], "el-7");

    let long = format!("https://example.com/{}", "a".repeat(300));
    e.mode = Mode::Url(long.clone());
    let body = create_body(&e, WAIT).unwrap();
    assert_eq!(body["attachments"][0]["name"], "The address above");
    assert!(body["context_md"].as_str().unwrap().contains(&long));

    // A part before @ is flagged, and the link is not named by the address it fakes.
    e.mode = Mode::Url("https://accounts.google.com@evil.example/login".into());
    let body = create_body(&e, WAIT).unwrap();
    let context = body["context_md"].as_str().unwrap();
    assert!(
        context.contains("the part before @ is not the site"),
        "{context}"
    );
    assert!(context.contains("```text\nevil.example\n```"), "{context}");
    assert_eq!(body["attachments"][0]["name"], "The address above");
    assert!(
        body["question"]
            .as_str()
            .unwrap()
            .ends_with("on evil.example")
    );

    for bad in [
        "javascript:alert(1)",
        "data:text/html,hi",
        "file:///etc/passwd",
        "/relative",
        "mailto:a@b.c",
    ] {
        e.mode = Mode::Url(bad.into());
        let why = create_body(&e, WAIT).unwrap_err();
        assert!(why.contains("url"), "{bad}: {why}");
    }
}

#[test]
fn only_the_persons_answer_is_accepted() {
    let f = form(json!({"type": "object", "properties": {"n": {"type": "integer"}}}));
    let answered = |channel: &str, outcome: Value| json!({"status": "answered", "outcome": outcome, "answered_by": {"channel": channel}});
    let mut content = Map::new();
    content.insert("n".into(), json!(3));
    assert_eq!(
        action_of(&answered("feed", json!({"n": 3})), &f).unwrap(),
        Action::Accept(Some(content))
    );
    for channel in ["push", "ntfy", "email"] {
        assert!(matches!(
            action_of(&answered(channel, json!({"n": 3})), &f).unwrap(),
            Action::Accept(_)
        ));
    }
    // The question's `web_url`, which the agent's key can read, and the API are not the person.
    for channel in ["link", "api"] {
        let why = action_of(&answered(channel, json!({"n": 3})), &f).unwrap_err();
        assert!(why.contains(channel), "{why}");
    }
    let declined =
        json!({"status": "declined", "outcome": null, "answered_by": {"channel": "push"}});
    assert_eq!(action_of(&declined, &f).unwrap(), Action::Decline);
    for status in ["expired", "cancelled"] {
        let d = json!({"status": status, "outcome": null, "answered_by": null});
        assert_eq!(action_of(&d, &f).unwrap(), Action::Cancel);
    }
    let d = json!({"status": "cancelled", "answered_by": {"channel": "api"}});
    assert_eq!(action_of(&d, &f).unwrap(), Action::Cancel);
    assert!(action_of(&json!({"status": "pending"}), &f).is_err());

    let mut u = f.clone();
    u.mode = Mode::Url("https://example.com".into());
    assert_eq!(
        action_of(&answered("feed", json!(true)), &u).unwrap(),
        Action::Accept(None)
    );
    assert_eq!(
        action_of(&answered("feed", json!(false)), &u).unwrap(),
        Action::Decline
    );
    assert!(action_of(&answered("feed", json!("yes")), &u).is_err());
}

#[test]
fn every_text_of_the_server_shows_hidden_characters() {
    let mut e = form(
        json!({"type": "object", "title": "Pay\u{202E}", "properties": {
        "n": {"type": "integer", "title": "Seats\u{200B}"}}}),
    );
    e.message = "Approve\u{202E}gnp.exe".into();
    let body = create_body(&e, WAIT).unwrap();
    let context = body["context_md"].as_str().unwrap();
    assert!(context.contains("Approve⟨U+202E⟩gnp.exe"), "{context}");
    assert!(context.contains("Pay⟨U+202E⟩"), "{context}");
    assert!(!context.contains('\u{202E}'), "{context}");
    assert_eq!(body["schema"]["properties"]["n"]["title"], "Seats⟨U+200B⟩");
}

#[test]
fn each_question_is_marked_as_its_own() {
    let e = form(json!({"type": "object", "properties": {"n": {"type": "integer"}}}));
    let a = create_body(&e, WAIT).unwrap();
    let b = create_body(&e, WAIT).unwrap();
    assert!(
        a["context_md"]
            .as_str()
            .unwrap()
            .contains("Asked by the sayso hook as question ")
    );
    assert_ne!(
        crate::hook::receipt::asked_sha256(&a),
        crate::hook::receipt::asked_sha256(&b)
    );
}
