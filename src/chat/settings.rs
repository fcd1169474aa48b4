//! The chats' settings as the server runs with them, checked once at start.

use url::Url;

/// Which chats are on, and how each reaches its platform.
#[derive(Debug, Clone, Default)]
pub struct ChatSettings {
    pub slack: Option<SlackSettings>,
    pub matrix: Option<MatrixSettings>,
    pub telegram: Option<TelegramSettings>,
}

#[derive(Debug, Clone)]
pub struct SlackSettings {
    pub bot_token: String,
    /// Checks the presses posted to the interactivity URL; without it that URL refuses all.
    pub signing_secret: Option<String>,
    /// Socket Mode's app-level token: presses come over a websocket the server opens.
    pub app_token: Option<String>,
    /// The Web API's base, ending in `/`.
    pub api_url: Url,
}

#[derive(Debug, Clone)]
pub struct MatrixSettings {
    pub homeserver: Url,
    pub user: String,
    pub password: Option<String>,
    pub access_token: Option<String>,
}

#[derive(Debug, Clone)]
pub struct TelegramSettings {
    pub bot_token: String,
    /// Set: updates come by webhook with this secret; unset: by long polling.
    pub webhook_secret: Option<String>,
    /// The Bot API's base, without the `/bot<token>` part.
    pub api_url: Url,
}

impl ChatSettings {
    /// Whether any chat is on.
    pub fn any(&self) -> bool {
        self.slack.is_some() || self.matrix.is_some() || self.telegram.is_some()
    }
}
