//! The tools as a model sees them: names, descriptions and input schemas.
//!
//! The schemas describe; the service validates. `ask_user` hands its arguments to the same
//! validation as `POST /v1/decisions`, so a field the schema does not list is accepted with a
//! warning, exactly as over HTTP.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};

use super::profiles::{Profile, claude, gemini, omp, pi};

pub const ASK_USER: &str = "ask_user";
pub const GET_DECISION: &str = "get_decision";
pub const AWAIT_DECISION: &str = "await_decision";
pub const CANCEL_DECISION: &str = "cancel_decision";
pub const LIST_TODOS: &str = "list_todos";

/// What `/mcp` tells a client about itself when it connects.
pub const INSTRUCTIONS: &str = "sayso asks a person (the user) questions on your behalf and \
brings back their answers. The user may be away from the computer: they get a notification \
and answer on a web page, which can take minutes or hours. Use ask_user_question for quick \
multiple-choice or free-text questions (it waits for the answer in the same call), ask_user for \
everything else (yes/no, a choice, text, a form, or a to-do reminder), then await_decision \
until the answer arrives.";

/// What a profile's endpoint tells a client about itself when it connects.
pub fn instructions(profile: Profile) -> &'static str {
    match profile {
        Profile::Hosted => INSTRUCTIONS,
        _ => {
            "sayso asks a person (the user) questions on your behalf and brings back their \
answers. The user may be away from the computer: they are notified and answer on a web page. \
If the answer has not come when the ask tool returns, call await_decision with the decision_id \
it gives until it does; its result is the ask tool's own."
        }
    }
}

/// The tools `profile`'s endpoint lists: its ask tool, and what resuming needs.
pub fn of(profile: Profile) -> Vec<Tool> {
    let ask = match profile {
        Profile::Hosted => {
            return vec![
                ask_user_question(claude::HOSTED_TOOL, claude::schema(true)),
                ask_user(),
                await_decision(),
                get_decision(),
                cancel_decision(),
                list_todos(),
                super::handler::approve::tool(),
            ];
        }
        Profile::Omp => tool(
            omp::TOOL,
            "Ask",
            "Ask the user one or more questions, each with options to pick from; they may \
always type their own answer instead (do not add an \"Other\" option). Give each question an \
id; set multi to let them pick several, recommended to mark the option you suggest. The user \
may be away: they are notified and answer on a web page.",
            omp::schema(),
        ),
        Profile::Gemini => tool(
            gemini::TOOL,
            "Ask User",
            "Ask the user one or more questions to learn their preferences, clarify what is \
wanted, or have them decide. The user may be away: they are notified and answer on a web page.",
            gemini::schema(),
        ),
        Profile::Claude => ask_user_question(claude::TOOL, claude::schema(false)),
        Profile::Pi => tool(
            pi::TOOL,
            "Ask User",
            "Ask the user one or more questions when you need a decision, a preference, a \
confirmation or input you cannot infer. Options are suggestions: the user may always answer in \
their own words. Put the option you recommend first, with \"(Recommended)\" in its label, and \
ask related questions together. The user may be away: they answer on a web page; if they have \
not yet, the result says the questions are pending and await_decision gets the answers.",
            pi::schema(),
        ),
    };
    vec![ask, await_decision(), get_decision(), cancel_decision()]
}

fn tool(name: &'static str, title: &str, description: &'static str, schema: Value) -> Tool {
    let Value::Object(schema) = schema else {
        unreachable!("tool schemas are objects")
    };
    Tool::new(name, description, Arc::new(schema)).with_title(title)
}

fn read_only(t: Tool) -> Tool {
    t.with_annotations(
        ToolAnnotations::new()
            .read_only(true)
            .destructive(false)
            .open_world(false),
    )
}

fn decision_id_property() -> Value {
    json!({
        "type": "string",
        "description": "The decision_id the question was asked under."
    })
}

fn option_item() -> Value {
    json!({
        "type": "object",
        "description": "An option. A plain string is accepted as shorthand for {\"label\": …}.",
        "properties": {
            "label": {"type": "string", "description": "What the user picks; 1–200 characters, unique. The answer holds this label."},
            "description": {"type": "string", "description": "One line explaining the option."},
            "preview": {"type": "string", "description": "Markdown shown beside the option: a mock-up, code, a diff."}
        },
        "required": ["label"]
    })
}

fn ask_user() -> Tool {
    tool(
        ASK_USER,
        "Ask the user",
        "Ask the user (a person who may be away from the computer) a question. They are \
notified by push or email and answer on a small web page. Returns at once with a handle: \
decision_id, web_url (the user's answer page) and expires_at. Then call await_decision with the \
decision_id to get the answer; it waits up to 10 minutes per call (timeout_s), so call it again while \
the status is pending. \
Kinds: `bool` (yes/no; optional yes_label/no_label), `choose` (pick one of `options`, or several \
with `multi`; the user may type their own answer unless allow_other is false), `text` (free \
text), `form` (several fields, given as a flat JSON Schema in `schema` or as coding-agent \
`questions`), `todo` (a reminder the user marks done or skipped in their feed: nothing to wait \
for, do not await it). \
Give the user what they need to decide in context_md (Markdown). The question expires after \
ttl_minutes (default 60); default_outcome, if given, applies when nobody answers in time. \
To ask particular people of the inbox, name them in approvers; with required, several of them \
must say yes. \
Invalid arguments are refused with every problem listed by its path; harmless oddities come \
back as warnings.",
        json!({
            "type": "object",
            "properties": {
                "question": {"type": "string", "description": "The question, 1–2000 characters. Make it answerable on a phone without other context."},
                "kind": {"type": "string", "enum": ["bool", "choose", "text", "form", "todo"], "description": "What kind of answer is wanted."},
                "project": {"type": "string", "description": "Optional project name (≤100 characters) to group and filter questions."},
                "options": {"type": "array", "items": option_item(), "description": "choose: 2–20 options."},
                "multi": {"type": "boolean", "description": "choose: the user may pick several options (default false); the answer is then a list of labels."},
                "recommended": {"type": "integer", "description": "choose: index (from 0) of the option you recommend; shown as a badge."},
                "allow_other": {"type": "boolean", "description": "choose: offer \"Other\" with a text box (default true)."},
                "yes_label": {"type": "string", "description": "bool: text of the yes button (default \"Yes\")."},
                "no_label": {"type": "string", "description": "bool: text of the no button (default \"No\")."},
                "placeholder": {"type": "string", "description": "text, and the Other box of choose: hint text in the input."},
                "schema": {"type": "object", "description": "form: a flat JSON Schema {\"type\": \"object\", \"properties\": {…}, \"required\": […]}; each property a string (minLength, maxLength, format email/uri/date/date-time, enum), number or integer (minimum, maximum), boolean, or an array of enum strings; at most 30 properties. The answer is an object keyed by property name."},
                "questions": {
                    "type": "array",
                    "description": "form, instead of schema: 1–10 questions in the coding-agent shape. The answer is an object keyed by id, or by the question text where no id is given.",
                    "items": question_item()
                },
                "context_md": {"type": "string", "description": "Markdown shown above the question (≤64 KiB): what the user needs to know to decide."},
                "context_image_b64": {"type": "string", "description": "A PNG, JPEG, GIF or WebP image, base64 (≤5 MiB decoded), shown with the context."},
                "attachments": {
                    "type": "array",
                    "description": "Up to 10 links shown with the question.",
                    "items": {"type": "object", "properties": {"name": {"type": "string"}, "url": {"type": "string", "description": "An http(s) URL."}}, "required": ["name", "url"]}
                },
                "ttl_minutes": {"type": "integer", "minimum": 1, "maximum": 43200, "description": "Minutes until the question expires (default 60)."},
                "ttl_seconds": {"type": "integer", "minimum": 10, "maximum": 2592000, "description": "Instead of ttl_minutes, for short waits."},
                "default_outcome": {"description": "What applies if nobody answers in time; must be a valid answer (true/false for bool, a label for choose, a string for text, an object for form, \"done\"/\"skipped\" for todo). An expired decision still says status expired."},
                "allow_remark": {"type": "boolean", "description": "The user may add a free-text remark to the answer (default true)."},
                "notify": {"type": "string", "enum": ["push", "email", "none"], "description": "How the user is told (default push)."},
                "callback_url": {"type": "string", "description": "An http(s) URL that receives a signed webhook when the decision resolves."},
                "metadata": {"type": "object", "description": "Your own data (≤4 KiB), echoed back unchanged."},
                "approvers": {"type": "array", "items": {"type": "string"}, "maxItems": 50, "description": "Ask only these people of the inbox, by name (a-z, 0-9, - and _); default everyone in the inbox. Only they see it and may answer it."},
                "required": {"type": "integer", "minimum": 1, "maximum": 50, "description": "How many people must say yes (bool) or Allow before it resolves (default 1); any no resolves it at once. More than 1 only for bool."},
                "escalate_after_s": {"type": "integer", "minimum": 1, "description": "Seconds after which a question still pending goes to escalate_to too, who may then answer it; less than the ttl."},
                "escalate_to": {"type": "array", "items": {"type": "string"}, "maxItems": 50, "description": "Who an escalation reaches, by name (needs escalate_after_s); default everyone not among the approvers."},
                "urgent": {"type": "boolean", "description": "Notify through the people's quiet hours (default false). Only for what cannot wait until morning."},
                "idempotency_key": {"type": "string", "description": "Optional key (≤255 characters): asking again with the same key and arguments returns the first handle instead of asking twice."}
            },
            "required": ["question", "kind"]
        }),
    )
}

fn question_item() -> Value {
    json!({
        "type": "object",
        "properties": {
            "id": {"type": "string", "description": "Optional key of this answer in the result."},
            "question": {"type": "string", "description": "The full question."},
            "header": {"type": "string", "description": "A very short label shown as a chip (≤12 characters), e.g. \"Database\"."},
            "type": {"type": "string", "enum": ["choice", "text", "yesno"], "description": "Default: choice when options are given, else text."},
            "options": {"type": "array", "items": option_item(), "description": "choice: 1–20 options. \"Other\" (type your own) is always offered."},
            "multiSelect": {"type": "boolean", "description": "choice: several options may be picked."},
            "placeholder": {"type": "string", "description": "text: hint text in the input."},
            "recommended": {"type": "integer", "description": "choice: index of the recommended option."}
        },
        "required": ["question"]
    })
}

fn ask_user_question(name: &'static str, schema: Value) -> Tool {
    tool(
        name,
        "Ask the user questions",
        "Ask the user 1-4 multiple-choice questions and wait for the answers: to gather \
preferences, clarify ambiguous instructions, or have them choose between approaches. Each \
question has a header of at most 12 characters and 2-4 options with a label and a description \
(and optionally a preview); the user may always type their own answer and add a note, so do \
not add an \"Other\" option. Set multiSelect to let them pick several. The user may be away: \
they are notified and answer on a web page. If they have not answered when this returns, call \
await_decision with the decision_id it gives.",
        schema,
    )
}

fn await_decision() -> Tool {
    read_only(tool(
        AWAIT_DECISION,
        "Wait for the user's answer",
        "Wait for the user's answer to a question asked earlier. Returns as soon as the decision is answered, declined, expired or cancelled, or after timeout_s \
seconds (default 600) with status pending: then call await_decision again with the same \
decision_id. The result is what the asking tool returns for the answer (for ask_user, one \
sentence, with the full decision as structured content).",
        json!({
            "type": "object",
            "properties": {
                "decision_id": decision_id_property(),
                "timeout_s": {"type": "integer", "minimum": 0, "description": "Longest wait in seconds (default 600). A wait longer than the server's longest single await is kept in rounds, never cut short. Your MCP client's tool-call timeout must be longer (docs/MCP.md)."}
            },
            "required": ["decision_id"]
        }),
    ))
}

fn get_decision() -> Tool {
    read_only(tool(
        GET_DECISION,
        "Look at a decision",
        "Look at a question asked earlier, without waiting: its status (pending, answered, \
declined, expired, cancelled), the answer (outcome) and any remark.",
        json!({
            "type": "object",
            "properties": {"decision_id": decision_id_property()},
            "required": ["decision_id"]
        }),
    ))
}

fn cancel_decision() -> Tool {
    tool(
        CANCEL_DECISION,
        "Withdraw a question",
        "Withdraw a pending question the user no longer needs to answer (for example because \
you found the answer yourself). Fails if it was already answered, declined or expired.",
        json!({
            "type": "object",
            "properties": {
                "decision_id": decision_id_property(),
                "reason": {"type": "string", "description": "Optional reason, shown to the user."}
            },
            "required": ["decision_id"]
        }),
    )
    .with_annotations(
        ToolAnnotations::new()
            .read_only(false)
            .destructive(true)
            .idempotent(false)
            .open_world(false),
    )
}

fn list_todos() -> Tool {
    read_only(tool(
        LIST_TODOS,
        "List open to-dos",
        "List the to-do reminders (ask_user with kind todo) the user has not yet marked done or \
skipped, newest first.",
        json!({
            "type": "object",
            "properties": {
                "project": {"type": "string", "description": "Only the to-dos of this project."}
            }
        }),
    ))
}

/// The JSON object a tool's arguments arrive in.
pub type Arguments = JsonObject;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_has_a_description_and_an_object_schema() {
        let tools = of(Profile::Hosted);
        assert_eq!(tools.len(), 7);
        for t in tools {
            assert!(t.description.as_deref().is_some_and(|d| d.len() > 80));
            assert_eq!(t.input_schema.get("type"), Some(&json!("object")));
        }
    }

    #[test]
    fn ask_user_names_who_is_asked() {
        let tools = of(Profile::Hosted);
        let ask = tools.iter().find(|t| t.name == ASK_USER).unwrap();
        let props = ask.input_schema["properties"].as_object().unwrap();
        assert_eq!(props["approvers"]["items"]["type"], "string");
        assert_eq!(props["required"]["minimum"], 1);
        for field in ["escalate_after_s", "escalate_to", "urgent"] {
            assert!(props.contains_key(field), "{field}");
        }
    }
}
