//! `sayso person …`: an inbox's people, on the database `serve` runs on.

use super::database::{Links, open};
use super::describe;
use crate::config::{PersonArgs, PersonCommand, PersonGroup};
use crate::domain::outbox::Channel;
use crate::domain::people::Person;
use crate::service::{PersonSettings, Service, ServiceError};

/// `sayso person …`: what it prints goes to stdout, links alone on their line.
pub(super) async fn run_person(group: PersonGroup) -> anyhow::Result<()> {
    let printed = match group.command {
        PersonCommand::Add { .. } | PersonCommand::Link { .. } => Links::Printed,
        _ => Links::None,
    };
    let svc = open(&group.db, Some(&group.links), printed).await?;
    let cmd = group.command;
    // Unknown inboxes are the one `NotFound`; every other refusal says what it is.
    let fail = |inbox: &str| {
        let inbox = inbox.to_string();
        move |e: ServiceError| match e {
            ServiceError::NotFound => anyhow::anyhow!("there is no inbox named {inbox:?}"),
            ServiceError::Validation(issues) => anyhow::anyhow!(
                "{}",
                issues
                    .into_iter()
                    .map(|i| i.message)
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
            e => describe(e),
        }
    };
    match cmd {
        PersonCommand::Add {
            name,
            inbox,
            settings,
        } => {
            let (_, link) = svc
                .add_person(&inbox, &name, &person_settings(settings))
                .await
                .map_err(fail(&inbox))?;
            println!("{link}");
        }
        PersonCommand::List { inbox } => {
            let people = svc.list_people(&inbox).await.map_err(fail(&inbox))?;
            for line in people_table(&people) {
                println!("{line}");
            }
        }
        PersonCommand::Set {
            name,
            inbox,
            settings,
        } => {
            let p = svc
                .set_person(&inbox, &name, &person_settings(settings))
                .await
                .map_err(fail(&inbox))?;
            let show = |v: &Option<String>| v.clone().unwrap_or_else(|| "(none)".into());
            let own = if p.is_inbox_own() {
                " (the inbox's own)"
            } else {
                ""
            };
            println!("name:       {}{own}", p.name);
            println!("email:      {}", show(&p.email));
            println!("ntfy_url:   {}", show(&p.ntfy_url));
            println!(
                "ntfy_token: {}",
                if p.ntfy_token.is_some() {
                    "(set)"
                } else {
                    "(none)"
                }
            );
            println!("slack:      {}", show(&p.chats.slack));
            println!("matrix:     {}", show(&p.chats.matrix));
            println!("telegram:   {}", show(&p.chats.telegram));
            println!("tz:         {}", p.tz.as_deref().unwrap_or("(none: UTC)"));
            println!(
                "quiet:      {}",
                show(&p.quiet.as_ref().map(|q| q.window()))
            );
            println!("lang:       {}", show(&p.lang.map(|l| l.to_string())));
        }
        PersonCommand::Remove { name, inbox } => {
            svc.remove_person(&inbox, &name)
                .await
                .map_err(fail(&inbox))?;
            println!("removed {name:?} from the inbox {inbox:?}");
        }
        PersonCommand::Link { name, inbox, qr } => {
            let link = svc
                .person_feed_url(&inbox, &name)
                .await
                .map_err(fail(&inbox))?;
            println!("{link}");
            if qr {
                let code = super::qr::render(&link)
                    .ok_or_else(|| anyhow::anyhow!("the link is too long for a QR code"))?;
                print!("\n{code}");
            }
        }
        PersonCommand::Rename {
            name,
            new_name,
            inbox,
        } => {
            svc.rename_person(&inbox, &name, &new_name)
                .await
                .map_err(fail(&inbox))?;
            println!("renamed {name:?} to {new_name:?} in the inbox {inbox:?}");
        }
        PersonCommand::Test {
            name,
            inbox,
            channel,
            chats,
        } => {
            let settings = crate::app::chat_settings(&chats).map_err(anyhow::Error::msg)?;
            let channel = Channel::parse(&channel)
                .ok_or_else(|| anyhow::anyhow!("{channel:?} is not slack, matrix or telegram"))?;
            let person = svc
                .named_person(&inbox, &name)
                .await
                .map_err(fail(&inbox))?;
            let said = crate::chat::send_test(&settings, channel, &person, &svc)
                .await
                .map_err(anyhow::Error::msg)?;
            println!("{said}");
        }
        PersonCommand::Passkeys(args) => {
            let inbox = args.inbox.clone();
            for line in person_passkeys(&svc, args).await.map_err(fail(&inbox))? {
                println!("{line}");
            }
        }
    }
    Ok(())
}

/// `sayso person passkeys`: one line per passkey (id, added, last used, browser), or the
/// one removed.
async fn person_passkeys(
    svc: &Service,
    args: crate::config::passkeys::PersonPasskeysArgs,
) -> Result<Vec<String>, ServiceError> {
    use crate::domain::webauthn::ID_PREFIX_CHARS;
    let short = |id: &str| id.chars().take(ID_PREFIX_CHARS).collect::<String>();
    let (name, inbox) = (&args.name, &args.inbox);
    if let Some(id) = &args.remove {
        let removed = svc.remove_person_passkey(inbox, name, id).await?;
        return Ok(vec![format!(
            "removed the passkey {} of {name:?} (inbox {inbox:?})",
            short(&removed.credential_id)
        )]);
    }
    let passkeys = svc.person_passkeys(inbox, name).await?;
    // Times in the machine's zone, as the rest of the command line prints them.
    let zone = crate::render::Zone::system();
    if passkeys.is_empty() {
        return Ok(vec![format!("{name:?} has no passkey")]);
    }
    Ok(passkeys
        .iter()
        .map(|p| {
            let used = p.last_used_at.map_or("never used".to_string(), |t| {
                format!("last used {}", zone.date_time(t))
            });
            format!(
                "{}  added {}  {used}  {}",
                short(&p.credential_id),
                zone.date_time(p.added_at),
                p.user_agent.as_deref().unwrap_or("(browser unknown)")
            )
        })
        .collect())
}

fn person_settings(a: PersonArgs) -> PersonSettings {
    PersonSettings {
        email: a.email,
        ntfy_url: a.ntfy_url,
        ntfy_token: a.ntfy_token,
        slack: a.slack,
        matrix: a.matrix,
        telegram: a.telegram,
        quiet: a.quiet,
        tz: a.tz,
        lang: a.lang,
    }
}

/// "slack:U012AB3CD telegram:4242", the chats they are on.
fn chats(p: &Person) -> Option<String> {
    use crate::domain::outbox::Channel;
    let on: Vec<String> = [Channel::Slack, Channel::Matrix, Channel::Telegram]
        .into_iter()
        .filter_map(|c| p.chats.on(c).map(|user| format!("{c}:{user}")))
        .collect();
    (!on.is_empty()).then(|| on.join(" "))
}

/// One line per person, in aligned columns: name, email, ntfy topic, chats, zone, quiet
/// hours, language, `-` for what they have not, and which one is the inbox's own.
fn people_table(people: &[Person]) -> Vec<String> {
    let dash = |v: Option<String>| v.unwrap_or_else(|| "-".into());
    let rows: Vec<[String; 8]> = people
        .iter()
        .map(|p| {
            [
                p.name.clone(),
                dash(p.email.clone()),
                dash(p.ntfy_url.clone()),
                dash(chats(p)),
                dash(p.tz.clone()),
                dash(p.quiet.as_ref().map(|q| q.window())),
                dash(p.lang.map(|l| format!("lang:{l}"))),
                if p.is_inbox_own() {
                    "(the inbox's own)".into()
                } else {
                    String::new()
                },
            ]
        })
        .collect();
    let mut widths = [0; 8];
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    rows.iter()
        .map(|row| {
            let mut line = String::new();
            for (i, (cell, w)) in row.iter().zip(widths).enumerate() {
                if i > 0 {
                    line.push_str("  ");
                }
                line.push_str(cell);
                line.extend(std::iter::repeat_n(' ', w - cell.chars().count()));
            }
            line.trim_end().to_string()
        })
        .collect()
}
