//! The chats' settings (docs/CHANNELS.md): the service's side of Slack, Matrix and Telegram,
//! set once for the server. A chat is on when its token (or homeserver) is set.

use clap::Args;

/// Slack, Matrix and Telegram.
#[derive(Debug, Clone, Default, Args)]
pub struct ChatArgs {
    /// Slack: the bot's token (xoxb-…). Slack is off when unset.
    #[arg(long, env = "SAYSO_SLACK_BOT_TOKEN", hide_env_values = true)]
    pub slack_bot_token: Option<String>,
    /// Slack: the app's signing secret, which checks the presses Slack posts to
    /// /chat/slack/interactivity.
    #[arg(long, env = "SAYSO_SLACK_SIGNING_SECRET", hide_env_values = true)]
    pub slack_signing_secret: Option<String>,
    /// Slack: the app-level token (xapp-…) for Socket Mode, which needs no public URL.
    #[arg(long, env = "SAYSO_SLACK_APP_TOKEN", hide_env_values = true)]
    pub slack_app_token: Option<String>,
    /// Slack: where its Web API is [default: https://slack.com/api/].
    #[arg(long, env = "SAYSO_SLACK_API_URL")]
    pub slack_api_url: Option<String>,
    /// Matrix: the bot's homeserver, e.g. https://matrix.example.org. Matrix is off when
    /// unset.
    #[arg(long, env = "SAYSO_MATRIX_HOMESERVER")]
    pub matrix_homeserver: Option<String>,
    /// Matrix: the bot's user, @sayso:example.org (or its name on that homeserver).
    #[arg(long, env = "SAYSO_MATRIX_USER")]
    pub matrix_user: Option<String>,
    /// Matrix: the bot's password (to log in), or…
    #[arg(
        long,
        env = "SAYSO_MATRIX_PASSWORD",
        hide_env_values = true,
        allow_hyphen_values = true
    )]
    pub matrix_password: Option<String>,
    /// …an access token of the bot's.
    #[arg(long, env = "SAYSO_MATRIX_ACCESS_TOKEN", hide_env_values = true)]
    pub matrix_access_token: Option<String>,
    /// Telegram: the bot's token from @BotFather. Telegram is off when unset.
    #[arg(long, env = "SAYSO_TELEGRAM_BOT_TOKEN", hide_env_values = true)]
    pub telegram_bot_token: Option<String>,
    /// Telegram: a secret of your choosing (A-Z, a-z, 0-9, _ and -) that Telegram sends with
    /// each update to /chat/telegram/webhook; set, updates come by webhook, unset, by long
    /// polling (no public URL needed).
    #[arg(
        long,
        env = "SAYSO_TELEGRAM_WEBHOOK_SECRET",
        hide_env_values = true,
        allow_hyphen_values = true
    )]
    pub telegram_webhook_secret: Option<String>,
    /// Telegram: where its Bot API is [default: https://api.telegram.org].
    #[arg(long, env = "SAYSO_TELEGRAM_API_URL")]
    pub telegram_api_url: Option<String>,
}
