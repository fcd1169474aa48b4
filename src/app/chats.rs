//! The chats' settings from the command line: each chat checked whole at start, a chat half
//! set up refused with a message naming what it lacks.

use url::Url;

use crate::chat::{ChatSettings, MatrixSettings, SlackSettings, TelegramSettings};
use crate::config::ChatArgs;

/// The settings `args` give, each chat checked whole: a chat half set up is refused with
/// a message naming what it lacks.
pub fn chat_settings(args: &ChatArgs) -> Result<ChatSettings, String> {
    let given = |v: &Option<String>| {
        v.as_deref()
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_string)
    };
    let slack = match given(&args.slack_bot_token) {
        None => None,
        Some(bot_token) => {
            if !bot_token.starts_with("xoxb-") {
                return Err(
                    "SAYSO_SLACK_BOT_TOKEN is not a bot token (xoxb-…): copy the \
                    Bot User OAuth Token under OAuth & Permissions"
                        .into(),
                );
            }
            let signing_secret = given(&args.slack_signing_secret);
            let app_token = given(&args.slack_app_token);
            if signing_secret.is_none() && app_token.is_none() {
                return Err("SAYSO_SLACK_BOT_TOKEN is set, but neither \
                    SAYSO_SLACK_SIGNING_SECRET (presses posted to /chat/slack/interactivity) \
                    nor SAYSO_SLACK_APP_TOKEN (Socket Mode): Slack could send questions but \
                    take no answer"
                    .into());
            }
            if app_token
                .as_deref()
                .is_some_and(|t| !t.starts_with("xapp-"))
            {
                return Err("SAYSO_SLACK_APP_TOKEN is not an app-level token (xapp-…): \
                    make one under Basic Information → App-Level Tokens with \
                    connections:write"
                    .into());
            }
            Some(SlackSettings {
                bot_token,
                signing_secret,
                app_token,
                api_url: base_url(
                    "SAYSO_SLACK_API_URL",
                    given(&args.slack_api_url).as_deref(),
                    "https://slack.com/api/",
                )?,
            })
        }
    };
    let matrix = match given(&args.matrix_homeserver) {
        None => None,
        Some(homeserver) => {
            let user = given(&args.matrix_user).ok_or(
                "SAYSO_MATRIX_HOMESERVER is set but SAYSO_MATRIX_USER is not: which user is \
                 the bot?",
            )?;
            let password = given(&args.matrix_password);
            let access_token = given(&args.matrix_access_token);
            if password.is_none() && access_token.is_none() {
                return Err("SAYSO_MATRIX_HOMESERVER is set but neither \
                    SAYSO_MATRIX_PASSWORD nor SAYSO_MATRIX_ACCESS_TOKEN: the bot cannot \
                    log in"
                    .into());
            }
            Some(MatrixSettings {
                homeserver: base_url("SAYSO_MATRIX_HOMESERVER", Some(&homeserver), "")?,
                user,
                password,
                access_token,
            })
        }
    };
    let telegram = match given(&args.telegram_bot_token) {
        None => None,
        Some(bot_token) => {
            let webhook_secret = given(&args.telegram_webhook_secret);
            if let Some(s) = &webhook_secret
                && (s.len() > 256
                    || !s
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'))
            {
                return Err(
                    "SAYSO_TELEGRAM_WEBHOOK_SECRET may hold only A-Z, a-z, 0-9, _ \
                    and -, at most 256 of them (Telegram's rule for secret_token)"
                        .into(),
                );
            }
            Some(TelegramSettings {
                bot_token,
                webhook_secret,
                api_url: base_url(
                    "SAYSO_TELEGRAM_API_URL",
                    given(&args.telegram_api_url).as_deref(),
                    "https://api.telegram.org/",
                )?,
            })
        }
    };
    Ok(ChatSettings {
        slack,
        matrix,
        telegram,
    })
}

/// An http(s) base URL, ending in `/` so that relative paths join under it.
fn base_url(name: &str, given: Option<&str>, default: &str) -> Result<Url, String> {
    let raw = given.unwrap_or(default);
    let mut url = Url::parse(raw).map_err(|e| format!("{name} is not a URL ({raw:?}): {e}"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!("{name} must be an http or https URL, not {raw:?}"));
    }
    if !url.path().ends_with('/') {
        let path = format!("{}/", url.path());
        url.set_path(&path);
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_token_no_chat() {
        let s = chat_settings(&ChatArgs::default()).unwrap();
        assert!(!s.any());
    }

    #[test]
    fn a_chat_half_set_up_is_refused_naming_what_it_lacks() {
        let slack = ChatArgs {
            slack_bot_token: Some("xoxb-1".into()),
            ..ChatArgs::default()
        };
        let e = chat_settings(&slack).unwrap_err();
        assert!(e.contains("SAYSO_SLACK_SIGNING_SECRET"), "{e}");
        let matrix = ChatArgs {
            matrix_homeserver: Some("https://m.example".into()),
            matrix_user: Some("@sayso:m.example".into()),
            ..ChatArgs::default()
        };
        let e = chat_settings(&matrix).unwrap_err();
        assert!(e.contains("SAYSO_MATRIX_PASSWORD"), "{e}");
        let telegram = ChatArgs {
            telegram_bot_token: Some("1:x".into()),
            telegram_webhook_secret: Some("not secret!".into()),
            ..ChatArgs::default()
        };
        let e = chat_settings(&telegram).unwrap_err();
        assert!(e.contains("A-Z, a-z, 0-9"), "{e}");
    }

    #[test]
    fn base_urls_end_in_a_slash() {
        let t = chat_settings(&ChatArgs {
            telegram_bot_token: Some("1:x".into()),
            telegram_api_url: Some("http://127.0.0.1:9/tg".into()),
            ..ChatArgs::default()
        })
        .unwrap();
        assert_eq!(
            t.telegram.unwrap().api_url.as_str(),
            "http://127.0.0.1:9/tg/"
        );
    }
}
