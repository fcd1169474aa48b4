//! Inboxes, their API keys, their channels and push subscriptions.

use time::Duration;
use uuid::Uuid;

use sayso::domain::inbox::{Inbox, InboxChannels, KeyGrant, PushSubscription};
use sayso::domain::people::Person;
use sayso::domain::quiet::QuietHours;
use sayso::storage::{Store, StoreError};

use crate::support::{T0, inbox, ms, own_person};

pub async fn inbox_names_are_unique(store: &dyn Store) {
    assert_eq!(store.count_inboxes().await.unwrap(), 0);
    let home = store
        .create_inbox("home", Some("me@example.com"), T0)
        .await
        .unwrap();
    assert_eq!(home.name, "home");
    assert_eq!(home.channels.email.as_deref(), Some("me@example.com"));
    assert_eq!(home.created_at, ms(T0));

    let again = store.create_inbox("home", None, T0).await;
    assert!(matches!(again, Err(StoreError::Conflict(_))), "{again:?}");
    let work = store.create_inbox("work", None, T0).await.unwrap();
    assert_ne!(work.id, home.id);

    assert_eq!(
        store.inbox_by_name("home").await.unwrap(),
        Some(home.clone())
    );
    assert_eq!(store.inbox_by_id(home.id).await.unwrap(), Some(home));
    assert_eq!(store.inbox_by_name("Home").await.unwrap(), None);
    assert_eq!(store.inbox_by_id(Uuid::now_v7()).await.unwrap(), None);
    assert_eq!(store.count_inboxes().await.unwrap(), 2);
}

pub async fn keys_find_their_inbox(store: &dyn Store) {
    let home = store.create_inbox("home", None, T0).await.unwrap();
    let work = store.create_inbox("work", None, T0).await.unwrap();
    let k1 = store
        .create_api_key(home.id, "hash-1", false, T0)
        .await
        .unwrap();
    let k2 = store
        .create_api_key(home.id, "hash-2", true, T0)
        .await
        .unwrap();
    let k3 = store
        .create_api_key(work.id, "hash-3", false, T0)
        .await
        .unwrap();
    // The inbox as its key opens it: with the key, and what the key may do.
    let through = |inbox: &Inbox, id, urgent| Inbox {
        key: Some(KeyGrant { id, urgent }),
        ..inbox.clone()
    };

    assert_eq!(
        store.inbox_for_key("hash-1").await.unwrap(),
        Some(through(&home, k1, false))
    );
    assert_eq!(
        store.inbox_for_key("hash-2").await.unwrap(),
        Some(through(&home, k2, true))
    );
    assert_eq!(
        store.inbox_for_key("hash-3").await.unwrap(),
        Some(through(&work, k3, false))
    );
    assert_eq!(store.inbox_for_key("hash-4").await.unwrap(), None);

    let taken = store.create_api_key(home.id, "hash-3", false, T0).await;
    assert!(matches!(taken, Err(StoreError::Conflict(_))), "{taken:?}");
    let orphan = store
        .create_api_key(Uuid::now_v7(), "hash-5", false, T0)
        .await;
    assert!(matches!(orphan, Err(StoreError::NotFound)), "{orphan:?}");
}

pub async fn inbox_channels_round_trip(store: &dyn Store) {
    let home = store
        .create_inbox("home", Some("me@example.com"), T0)
        .await
        .unwrap()
        .id;
    assert_eq!(
        store.inbox_channels(home).await.unwrap(),
        InboxChannels {
            email: Some("me@example.com".into()),
            ..InboxChannels::default()
        }
    );
    let channels = InboxChannels {
        email: Some("other@example.com".into()),
        ntfy_url: Some("https://ntfy.sh/my-topic".into()),
        ntfy_token: Some("tk_secret".into()),
        webhook_secret: Some("whsec_c2VjcmV0".into()),
        chats: Default::default(),
    };
    store.set_inbox_channels(home, &channels).await.unwrap();
    assert_eq!(store.inbox_channels(home).await.unwrap(), channels);
    let inbox = store.inbox_by_id(home).await.unwrap().unwrap();
    assert_eq!(
        inbox,
        sayso::domain::inbox::Inbox {
            channels: channels.clone(),
            ..inbox.clone()
        }
    );
    assert_eq!(inbox.channels.email.as_deref(), Some("other@example.com"));
    store
        .set_inbox_channels(home, &InboxChannels::default())
        .await
        .unwrap();
    assert_eq!(
        store.inbox_channels(home).await.unwrap(),
        InboxChannels::default()
    );

    let missing = Uuid::now_v7();
    let r = store.inbox_channels(missing).await;
    assert!(matches!(r, Err(StoreError::NotFound)), "{r:?}");
    let r = store.set_inbox_channels(missing, &channels).await;
    assert!(matches!(r, Err(StoreError::NotFound)), "{r:?}");
}

pub async fn push_subscriptions_are_upserted_listed_and_removed(store: &dyn Store) {
    let home = own_person(store, inbox(store, "home").await).await;
    let work = own_person(store, inbox(store, "work").await).await;
    let sub = |endpoint: &str, key: &str| PushSubscription {
        endpoint: format!("https://push.example.com/{endpoint}"),
        p256dh: format!("BP256-{key}"),
        auth: format!("auth-{key}"),
    };
    let (a, b, c) = (sub("a", "1"), sub("b", "2"), sub("c", "3"));
    store.add_push_subscription(&home, &b, T0).await.unwrap();
    store
        .add_push_subscription(&home, &a, T0 + Duration::seconds(1))
        .await
        .unwrap();
    store
        .add_push_subscription(&work, &c, T0 + Duration::seconds(2))
        .await
        .unwrap();
    assert_eq!(
        store.push_subscriptions(&home).await.unwrap(),
        vec![b.clone(), a.clone()]
    );

    // Subscribing again with new keys, and from another person, moves the subscription.
    let b2 = sub("b", "2-new");
    store
        .add_push_subscription(&work, &b2, T0 + Duration::seconds(3))
        .await
        .unwrap();
    assert_eq!(
        store.push_subscriptions(&home).await.unwrap(),
        vec![a.clone()]
    );
    assert_eq!(
        store.push_subscriptions(&work).await.unwrap(),
        vec![c.clone(), b2]
    );

    store.remove_push_subscription(&a.endpoint).await.unwrap();
    store.remove_push_subscription(&a.endpoint).await.unwrap();
    store
        .remove_push_subscription("https://push.example.com/never")
        .await
        .unwrap();
    assert!(store.push_subscriptions(&home).await.unwrap().is_empty());
    let nobody = Person {
        id: Uuid::now_v7(),
        inbox_id: Uuid::now_v7(),
        ..home.clone()
    };
    assert!(store.push_subscriptions(&nobody).await.unwrap().is_empty());
    let r = store.add_push_subscription(&nobody, &a, T0).await;
    assert!(matches!(r, Err(StoreError::NotFound)), "{r:?}");
}

pub async fn devices_are_bound_to_their_person(store: &dyn Store) {
    let home = own_person(store, inbox(store, "home").await).await;
    let work = own_person(store, inbox(store, "work").await).await;
    let (a, b) = (Uuid::now_v7(), Uuid::now_v7());
    store.add_device(a, &home, T0).await.unwrap();
    store.add_device(b, &work, T0).await.unwrap();
    assert_eq!(store.device_person(a).await.unwrap(), Some(home.clone()));
    assert_eq!(store.device_person(b).await.unwrap(), Some(work));
    assert_eq!(store.device_person(Uuid::now_v7()).await.unwrap(), None);
    // Removing the person unbinds their devices.
    assert!(store.remove_person(home.id).await.unwrap());
    assert!(!store.remove_person(home.id).await.unwrap());
    assert_eq!(store.device_person(a).await.unwrap(), None);
}

pub async fn people_are_added_listed_changed_and_removed(store: &dyn Store) {
    let home = inbox(store, "home").await;
    let own = own_person(store, home).await;
    assert_eq!(own.name, "home");
    assert!(own.is_inbox_own());
    let ana = Person {
        id: Uuid::now_v7(),
        inbox_id: home,
        name: "ana".into(),
        email: Some("ana@example.com".into()),
        ntfy_url: None,
        ntfy_token: None,
        chats: Default::default(),
        tz: Some("Europe/Berlin".into()),
        quiet: Some(QuietHours::parse("22:00-07:00", Some("Europe/Berlin")).unwrap()),
        // Kept in both stores, like every other setting of a person.
        lang: Some(sayso::domain::lang::Lang::De),
        created_at: ms(T0 + Duration::seconds(1)),
    };
    store.add_person(&ana).await.unwrap();
    let again = Person {
        id: Uuid::now_v7(),
        ..ana.clone()
    };
    assert!(matches!(
        store.add_person(&again).await,
        Err(StoreError::Conflict(_))
    ));
    let elsewhere = Person {
        id: Uuid::now_v7(),
        inbox_id: Uuid::now_v7(),
        ..ana.clone()
    };
    assert!(matches!(
        store.add_person(&elsewhere).await,
        Err(StoreError::NotFound)
    ));
    assert_eq!(
        store.people(home).await.unwrap(),
        vec![own.clone(), ana.clone()]
    );
    assert_eq!(store.person(ana.id).await.unwrap(), Some(ana.clone()));

    let changed = Person {
        email: None,
        ntfy_url: Some("https://ntfy.example.com/ana".into()),
        tz: None,
        quiet: None,
        lang: None,
        ..ana.clone()
    };
    store.update_person(&changed).await.unwrap();
    assert_eq!(store.person(ana.id).await.unwrap(), Some(changed.clone()));
    // A zone of their own, without quiet hours.
    let zoned = Person {
        tz: Some("Asia/Kolkata".into()),
        ..changed
    };
    store.update_person(&zoned).await.unwrap();
    assert_eq!(store.person(ana.id).await.unwrap(), Some(zoned));
    // The inbox's own person's channels are the inbox's, whichever way they are set.
    let own_changed = Person {
        email: Some("me@example.com".into()),
        ..own.clone()
    };
    store.update_person(&own_changed).await.unwrap();
    assert_eq!(
        store.inbox_channels(home).await.unwrap().email.as_deref(),
        Some("me@example.com")
    );
    let mut channels = store.inbox_channels(home).await.unwrap();
    channels.email = Some("inbox@example.com".into());
    store.set_inbox_channels(home, &channels).await.unwrap();
    assert_eq!(
        store.person(home).await.unwrap().unwrap().email.as_deref(),
        Some("inbox@example.com")
    );
    assert!(matches!(
        store.update_person(&elsewhere).await,
        Err(StoreError::NotFound)
    ));
    assert!(store.remove_person(ana.id).await.unwrap());
    assert_eq!(store.people(home).await.unwrap().len(), 1);
}

pub async fn people_are_renamed_keeping_everything_else(store: &dyn Store) {
    let home = inbox(store, "home").await;
    let own = own_person(store, home).await;
    assert!(store.rename_person(own.id, "ana").await.unwrap());
    let renamed = own_person(store, home).await;
    assert_eq!(
        renamed,
        Person {
            name: "ana".into(),
            ..own.clone()
        }
    );
    // The inbox keeps its name; the own person is still the inbox's.
    assert!(store.inbox_by_name("home").await.unwrap().is_some());
    assert!(renamed.is_inbox_own());
    let bo = Person {
        id: Uuid::now_v7(),
        name: "bo".into(),
        created_at: ms(T0 + Duration::seconds(1)),
        ..own.clone()
    };
    store.add_person(&bo).await.unwrap();
    assert!(matches!(
        store.rename_person(bo.id, "ana").await,
        Err(StoreError::Conflict(_))
    ));
    // The same name in another inbox is no conflict.
    let other = inbox(store, "other").await;
    assert!(store.rename_person(other, "ana").await.unwrap());
    assert!(!store.rename_person(Uuid::now_v7(), "cy").await.unwrap());
}
