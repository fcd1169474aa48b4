//! The validated definition of a decision: everything the agent asked for, in the shape the
//! answer page and the answer validator need. A `DecisionSpec` only comes out of
//! `new_decision::parse_new_decision`, so one that exists is valid. It is stored as JSON.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::approval;
use super::kind::{Kind, Notify};

/// What the agent asked, validated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DecisionSpec {
    pub question: String,
    pub project: Option<String>,
    /// Kind-specific parts; its variant always matches `kind()`.
    pub body: KindSpec,
    pub context_md: Option<String>,
    pub attachments: Vec<Attachment>,
    pub allow_remark: bool,
    pub notify: Notify,
    pub callback_url: Option<String>,
    /// The one request that resumes a durable workflow when the decision settles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion: Option<super::completion::Completion>,
    /// Echoed back unchanged; always a JSON object (empty when not given).
    pub metadata: Map<String, Value>,
    /// Applied on expiry; already checked to be a valid outcome for this decision.
    pub default_outcome: Option<Value>,
    /// The ask tool whose shape the agent asked in (an MCP profile), so every later read
    /// words the result the way that tool does. `None` for sayso's own shapes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<Shape>,
    /// Set when the decision is a coding agent's tool approval (`sayso hook`, `approve`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<approval::ApprovalSpec>,
    /// Who is asked and how many must agree, when the request said (`people`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routing: Option<super::people::Routing>,
}

/// An ask tool agents already know, whose input and result sayso speaks (docs/SEEDS.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Shape {
    /// oh-my-pi's `ask`.
    Omp,
    /// gemini-cli's `ask_user`.
    Gemini,
    /// Claude Code's `AskUserQuestion` (`ask_user_question` on `/mcp`).
    Claude,
    /// pi's `ask_user`.
    Pi,
}

impl Shape {
    /// Whether the page offers a note box per question: only where the tool's result has a
    /// place for it.
    pub fn takes_notes(self) -> bool {
        matches!(self, Shape::Omp | Shape::Claude)
    }
}

impl DecisionSpec {
    pub fn kind(&self) -> Kind {
        self.body.kind()
    }

    /// Whether this is an approval whose Allow needs a step-up (a passkey): no notification
    /// may then answer Allow in one tap.
    pub fn needs_step_up(&self) -> bool {
        self.approval.as_ref().is_some_and(|a| a.step_up.is_some())
    }

    /// Whether this offers "Allow for this session".
    pub fn offers_session(&self) -> bool {
        match &self.body {
            KindSpec::Choose { options, .. } => {
                options.iter().any(|o| o.label == approval::ALLOW_SESSION)
            }
            _ => false,
        }
    }

    /// Whether this and `other` are approvals of the same agent session.
    pub fn same_session(&self, other: &DecisionSpec) -> bool {
        match (&self.approval, &other.approval) {
            (Some(x), Some(y)) => {
                x.session_id.is_some() && x.session_id == y.session_id && x.harness == y.harness
            }
            _ => false,
        }
    }
}

/// The parts of a decision that depend on its kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum KindSpec {
    Bool {
        yes_label: String,
        no_label: String,
    },
    Choose {
        options: Vec<ChoiceOption>,
        multi: bool,
        /// Index into `options`; only kept when in range.
        recommended: Option<usize>,
        allow_other: bool,
        placeholder: Option<String>,
    },
    Text {
        placeholder: Option<String>,
    },
    Form(FormSpec),
    Todo,
}

impl KindSpec {
    pub fn kind(&self) -> Kind {
        match self {
            KindSpec::Bool { .. } => Kind::Bool,
            KindSpec::Choose { .. } => Kind::Choose,
            KindSpec::Text { .. } => Kind::Text,
            KindSpec::Form(_) => Kind::Form,
            KindSpec::Todo => Kind::Todo,
        }
    }
}

/// One option of a `choose` decision or of a choice field. For `choose` and coding-agent
/// questions the outcome is the `label`; for a form `enum`, it is `value`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChoiceOption {
    /// What the outcome holds when this option is picked.
    pub value: String,
    /// What the person reads (the `title` / `enumNames` entry for forms, else `value`).
    pub label: String,
    pub description: Option<String>,
    /// Markdown shown beside the option (mock-ups, code, diffs).
    pub preview: Option<String>,
}

/// A `form` decision: fields from a flat JSON Schema or from coding-agent `questions`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FormSpec {
    pub source: FormSource,
    pub fields: Vec<FormField>,
}

/// Which request shape a form came from; the page lays them out differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FormSource {
    Schema,
    Questions,
}

/// One field of a form; its `name` is its key in the outcome object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FormField {
    pub name: String,
    /// The label: the schema's `title` or the question's text.
    pub title: Option<String>,
    pub description: Option<String>,
    /// The short chip of a coding-agent question.
    pub header: Option<String>,
    /// Hint text of a question's "Other" box (a text question keeps its own in `input`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placeholder: Option<String>,
    pub required: bool,
    /// A valid value for this field, used to prefill the page.
    pub default: Option<Value>,
    pub input: FieldInput,
}

/// The input a field takes, with its constraints.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FieldInput {
    /// A free string, optionally with a format.
    Text {
        min_length: Option<u64>,
        max_length: Option<u64>,
        format: Option<StringFormat>,
        placeholder: Option<String>,
        /// A coding-agent `text` question: shown as a text area.
        multiline: bool,
    },
    /// One value out of a list (schema `enum` / `oneOf`, or a question of type `choice`/`yesno`).
    Choice {
        options: Vec<ChoiceOption>,
        /// Whether a typed answer outside `options` is accepted (coding-agent questions).
        allow_other: bool,
        recommended: Option<usize>,
    },
    /// Several values out of a list (schema `array` of enum strings, or `multiSelect`).
    MultiChoice {
        options: Vec<ChoiceOption>,
        min_items: Option<u64>,
        max_items: Option<u64>,
        allow_other: bool,
        recommended: Option<usize>,
    },
    Number {
        integer: bool,
        minimum: Option<f64>,
        maximum: Option<f64>,
    },
    Boolean,
}

/// The string formats of the MCP elicitation subset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StringFormat {
    Email,
    Uri,
    Date,
    DateTime,
}

/// A link shown with the decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attachment {
    pub name: String,
    /// An absolute http(s) URL.
    pub url: String,
}

/// The decoded `context_image_b64`, its type sniffed from its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    pub content_type: &'static str,
    pub bytes: Vec<u8>,
}
