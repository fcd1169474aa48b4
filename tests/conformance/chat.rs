//! The chats' storage: a person's chat users, the messages posted for each decision, and the
//! inbound keys already taken.

use time::Duration;
use uuid::Uuid;

use sayso::domain::chat::ChatPost;
use sayso::domain::outbox::Channel;
use sayso::domain::people::{ChatUsers, Person};
use sayso::storage::{Store, StoreError};

use crate::support::{T0, inbox, insert, ms};

fn person(inbox_id: Uuid, name: &str, chats: ChatUsers) -> Person {
    Person {
        id: Uuid::now_v7(),
        inbox_id,
        name: name.into(),
        email: None,
        ntfy_url: None,
        ntfy_token: None,
        chats,
        tz: None,
        quiet: None,
        lang: None,
        created_at: ms(T0),
    }
}

pub async fn chat_users_are_kept_and_unique_per_inbox(store: &dyn Store) {
    let a = inbox(store, "a").await;
    let b = inbox(store, "b").await;
    let chats = ChatUsers {
        slack: Some("U012AB3CD".into()),
        matrix: Some("@ana:example.org".into()),
        telegram: Some("4242".into()),
    };
    let ana = person(a, "ana", chats.clone());
    store.add_person(&ana).await.unwrap();
    assert_eq!(store.person(ana.id).await.unwrap().unwrap().chats, chats);
    // The same Slack user as another person of the same inbox is refused…
    let bo = person(
        a,
        "bo",
        ChatUsers {
            slack: Some("U012AB3CD".into()),
            ..ChatUsers::default()
        },
    );
    assert!(matches!(
        store.add_person(&bo).await,
        Err(StoreError::Conflict(_))
    ));
    // …but is someone of another inbox too.
    store
        .add_person(&person(b, "ana", chats.clone()))
        .await
        .unwrap();
    // Changed and removed like any channel.
    let mut changed = ana.clone();
    changed.chats.telegram = None;
    changed.chats.slack = Some("W0ANOTHER".into());
    store.update_person(&changed).await.unwrap();
    let read = store.person(ana.id).await.unwrap().unwrap();
    assert_eq!(read.chats.slack.as_deref(), Some("W0ANOTHER"));
    assert_eq!(read.chats.telegram, None);
}

pub async fn chat_posts_are_found_by_decision_and_by_message(store: &dyn Store) {
    let a = inbox(store, "a").await;
    let d = insert(store, a, "Deploy?").await;
    let other = insert(store, a, "Other?").await;
    let post = |decision: Uuid, channel, conversation: &str, message: &str| ChatPost {
        decision,
        person: a,
        channel,
        conversation: conversation.into(),
        message: message.into(),
    };
    let first = post(d.id, Channel::Telegram, "4242", "17");
    let second = post(d.id, Channel::Slack, "D01", "1712.000100");
    store.record_chat_post(&first, ms(T0)).await.unwrap();
    store
        .record_chat_post(&second, ms(T0 + Duration::seconds(1)))
        .await
        .unwrap();
    // Recorded twice (an attempt repeated after a crash) is still one.
    store.record_chat_post(&first, ms(T0)).await.unwrap();
    store
        .record_chat_post(&post(other.id, Channel::Telegram, "4242", "18"), ms(T0))
        .await
        .unwrap();
    assert_eq!(
        store.chat_posts(d.id).await.unwrap(),
        [first.clone(), second.clone()]
    );
    assert_eq!(
        store
            .chat_post(Channel::Telegram, "4242", "17")
            .await
            .unwrap(),
        Some(first)
    );
    // The same message id in another chat, or on another platform, is not it.
    assert_eq!(
        store
            .chat_post(Channel::Telegram, "4243", "17")
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        store
            .chat_post(Channel::Matrix, "4242", "17")
            .await
            .unwrap(),
        None
    );
}

pub async fn an_inbound_key_is_first_seen_once(store: &dyn Store) {
    assert!(store.first_seen("slack:sig-1", ms(T0)).await.unwrap());
    assert!(!store.first_seen("slack:sig-1", ms(T0)).await.unwrap());
    assert!(store.first_seen("slack:sig-2", ms(T0)).await.unwrap());
    // Forgotten after a day: by then the platform's own window refused it long ago.
    let later = ms(T0 + Duration::days(2));
    assert!(store.first_seen("slack:sig-1", later).await.unwrap());
}
