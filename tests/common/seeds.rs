//! The example calls of docs/SEEDS.md, what the page posts to answer them, and the results
//! the document gives: the seed tests make the calls through the Python MCP SDK, the harness
//! tests through the real agents.

/// pi's `ask_user` (seed 004).
pub mod pi {
    use serde_json::{Value, json};

    pub const DATABASE: &str = "Which database should we use?";
    pub const NAME: &str = "What should we name this service?";

    /// The document's example call.
    pub fn example() -> Value {
        json!({
            "questions": [
                {
                    "question": DATABASE,
                    "header": "Database Selection",
                    "options": [
                        {"label": "PostgreSQL (Recommended)", "description": "Battle-tested relational DB"},
                        {"label": "SQLite", "description": "Lightweight, file-based"},
                        {"label": "MongoDB", "description": "Document store"}
                    ]
                },
                {"question": NAME, "header": "Service Setup"}
            ],
            "metadata": {"source": "project-setup"}
        })
    }

    /// The example answered on the page: the recommended database, a name of the person's own.
    pub const ANSWERS: [(&str, &str); 2] = [
        (DATABASE, "PostgreSQL (Recommended)"),
        (NAME, "order-processor"),
    ];

    /// The document's result for [`ANSWERS`].
    pub fn result() -> Value {
        json!({
            "answered": true,
            "answers": [
                {
                    "question": DATABASE,
                    "answer": "PostgreSQL (Recommended)",
                    "selectedOption": "PostgreSQL (Recommended)",
                    "wasCustom": false
                },
                {"question": NAME, "answer": "order-processor", "wasCustom": true}
            ]
        })
    }
}

/// gemini-cli's `ask_user` (seed 002).
pub mod gemini {
    use serde_json::{Value, json};

    /// One question of each type the document names.
    pub fn questions() -> Value {
        json!([
            {
                "question": "Which authentication method should we use?",
                "header": "Auth method",
                "type": "choice",
                "options": [
                    {"label": "OAuth 2.0", "description": "Industry standard, supports SSO"},
                    {"label": "API keys", "description": "Simple, per client"}
                ],
                "placeholder": "Another method"
            },
            {"question": "What should the service be called?", "header": "Name", "type": "text", "placeholder": "e.g. orders"},
            {"question": "Should it run in production now?", "header": "Production", "type": "yesno"},
            {
                "question": "Which regions?",
                "header": "Regions",
                "type": "choice",
                "multiSelect": true,
                "options": [
                    {"label": "eu-west", "description": "Ireland"},
                    {"label": "us-east", "description": "Virginia"},
                    {"label": "ap-south", "description": "Mumbai"}
                ]
            }
        ])
    }

    /// [`questions`] answered on the page: a method of the person's own, a name, yes, and
    /// two regions.
    pub const ANSWERS: [(&str, &str); 6] = [
        ("Which authentication method should we use?", "__other__"),
        (
            "other:Which authentication method should we use?",
            "Passkeys",
        ),
        ("What should the service be called?", "orders"),
        ("Should it run in production now?", "yes"),
        ("Which regions?", "eu-west"),
        ("Which regions?", "ap-south"),
    ];

    /// The document's result for [`ANSWERS`]: the answers keyed by the question's index.
    pub const RESULT: &str =
        r#"{"answers":{"0":"Passkeys","1":"orders","2":"Yes","3":"eu-west, ap-south"}}"#;
}
