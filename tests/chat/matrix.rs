//! Matrix against a real homeserver: Synapse from PyPI (pinned, SQLite, on loopback, started
//! per test), with the people as real Matrix clients (matrix-nio, tests/chat/synapse/person.py).
//! sayso's bot logs in with a password, makes each person's direct room, sends the asks,
//! reads reactions and replies through its own sync, and edits the asks as they settle.

mod answers;
mod fields;
mod fixture;
mod homeserver;
mod lifecycle;
mod person;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use uuid::Uuid;

use self::homeserver::Homeserver;
use self::person::Person;
use crate::common::db::{SqliteTestDb, fresh_sqlite_url};
use crate::common::http::json_of;
use crate::common::process::SaysoProcess;
use crate::common::server::{TestServer, s};
use sayso::chat::{ChatSettings, MatrixSettings};
use sayso::domain::PersonChannel;
use sayso::domain::outbox::{MessageStatus, Route};
use sayso::domain::people::ChatUsers;

const BOT: &str = "@saysobot:sayso.test";
/// How long anything the bot should do at once may take on a busy machine.
const PROMPTLY: Duration = Duration::from_secs(30);
