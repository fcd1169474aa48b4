//! A person on Matrix: a real client (matrix-nio, tests/chat/synapse/person.py) logged in to
//! the test's Synapse, driven one command at a time.

use std::process::Stdio;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use super::homeserver::{Homeserver, scripts};
use crate::common::process::spawn_talking;

pub struct Person {
    pub user_id: String,
    child: Child,
    stdin: ChildStdin,
    stdout: Lines<BufReader<ChildStdout>>,
}

impl Person {
    /// Logs `name` in (registered by `Homeserver::register`).
    pub async fn login(hs: &Homeserver, name: &str) -> Person {
        let mut child = spawn_talking(
            Command::new(hs.python())
                .arg(scripts().join("person.py"))
                .args([
                    "drive",
                    &hs.url,
                    &format!("@{name}:sayso.test"),
                    &format!("{name}-password"),
                ])
                .stderr(Stdio::inherit()),
            "person.py",
        );
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut p = Person {
            user_id: String::new(),
            child,
            stdin,
            stdout,
        };
        let hello = p.read().await;
        assert_eq!(hello["ok"], true, "{name} could not log in: {hello}");
        p.user_id = hello["user_id"].as_str().unwrap().to_string();
        p
    }

    async fn read(&mut self) -> Value {
        let line =
            tokio::time::timeout(std::time::Duration::from_secs(120), self.stdout.next_line())
                .await
                .expect("person.py answers within 120 s")
                .unwrap()
                .expect("person.py is still running");
        serde_json::from_str(&line).unwrap()
    }

    /// Sends a command and returns its answer, which may be an error.
    pub async fn try_run(&mut self, cmd: Value) -> Value {
        let mut line = cmd.to_string();
        line.push('\n');
        self.stdin.write_all(line.as_bytes()).await.unwrap();
        self.stdin.flush().await.unwrap();
        self.read().await
    }

    /// Sends a command; its error fails the test.
    pub async fn run(&mut self, cmd: Value) -> Value {
        let out = self.try_run(cmd.clone()).await;
        assert_eq!(out["ok"], true, "{} {cmd}: {out}", self.user_id);
        out
    }

    /// Joins the direct room `from` invites them to; its id.
    pub async fn join_invite(&mut self, from: &str) -> String {
        let (room, direct) = self.join_from(from).await;
        assert!(direct, "the invitation is to a direct room");
        room
    }

    /// Joins the room `from` invites them to: its id, and whether it is marked direct.
    pub async fn join_from(&mut self, from: &str) -> (String, bool) {
        let out = self.run(json!({"do": "join", "from": from})).await;
        (
            out["room"].as_str().unwrap().to_string(),
            out["is_direct"] == true,
        )
    }

    /// The first message from `sender` in `room` whose body contains `contains`: its event id
    /// and content.
    pub async fn message(&mut self, room: &str, sender: &str, contains: &str) -> (String, Value) {
        let out = self
            .run(json!({"do": "message", "room": room, "sender": sender, "contains": contains}))
            .await;
        (
            out["event_id"].as_str().unwrap().to_string(),
            out["content"].clone(),
        )
    }

    /// The edit of `event` whose body contains `contains`: its sender and new content.
    pub async fn edit(&mut self, room: &str, event: &str, contains: &str) -> (String, Value) {
        let out = self
            .run(json!({"do": "edit", "room": room, "event": event, "contains": contains}))
            .await;
        (
            out["sender"].as_str().unwrap().to_string(),
            out["new_content"].clone(),
        )
    }

    pub async fn react(&mut self, room: &str, event: &str, key: &str) -> String {
        let out = self
            .run(json!({"do": "react", "room": room, "event": event, "key": key}))
            .await;
        out["event_id"].as_str().unwrap().to_string()
    }

    pub async fn reply(&mut self, room: &str, event: &str, text: &str) -> String {
        let out = self
            .run(json!({"do": "reply", "room": room, "event": event, "text": text}))
            .await;
        out["event_id"].as_str().unwrap().to_string()
    }

    /// The reaction keys `sender` placed on `event`, once there are at least `at_least`.
    pub async fn reactions(
        &mut self,
        room: &str,
        event: &str,
        sender: &str,
        at_least: usize,
    ) -> Vec<String> {
        let out = self
            .run(
                json!({"do": "reactions", "room": room, "event": event, "sender": sender,
                        "at_least": at_least}),
            )
            .await;
        serde_json::from_value(out["keys"].clone()).unwrap()
    }
}

impl Drop for Person {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}
