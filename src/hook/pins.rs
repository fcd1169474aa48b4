//! The receipt keys the hook trusts, one per server: `~/.config/sayso/receipt-keys.json`,
//! `{"<server URL>": "<public key>"}`. `sayso hook install` pins the server's key there
//! (fetched from `GET /v1/receipts/key`), and the hook then allows a call only with a
//! receipt that key signed (docs/HARNESSES.md, Receipts). `--receipt-key` /
//! `SAYSO_HOOK_RECEIPT_KEY` names one for a run instead.

use std::path::PathBuf;

use serde_json::{Map, Value};

use crate::domain::receipt::PublicKey;

/// The file's name under `~/.config/sayso`.
const FILE: &str = "receipt-keys.json";

/// Where the pins are kept; `None` without `HOME`.
pub fn file() -> Option<PathBuf> {
    let home = std::env::var_os("HOME")?;
    Some(PathBuf::from(home).join(".config").join("sayso").join(FILE))
}

/// A server URL as pins are keyed: without surrounding blanks or a trailing slash.
fn server_key(server: &str) -> String {
    server.trim().trim_end_matches('/').to_string()
}

/// The key pinned for `server`: `Ok(None)` when none is (no file, or no entry); `Err` when
/// the file cannot be read or holds something else, which the hook treats as a refusal (a
/// pin it cannot read must not turn checking off).
pub fn pinned(server: &str) -> Result<Option<PublicKey>, String> {
    let Some(path) = file() else {
        return Ok(None);
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let pins: Map<String, Value> = serde_json::from_str(&text).map_err(|_| {
        format!(
            "{} is not a JSON object of server URLs and keys",
            path.display()
        )
    })?;
    match pins.get(&server_key(server)) {
        None => Ok(None),
        Some(v) => v
            .as_str()
            .ok_or_else(|| "is not a string".to_string())
            .and_then(PublicKey::parse)
            .map(Some)
            .map_err(|e| format!("{}, the key for {server}: {e}", path.display())),
    }
}

/// Pins `key` for `server`, keeping the other servers' pins; the key it replaced, if another.
pub fn pin(server: &str, key: &PublicKey) -> anyhow::Result<Option<String>> {
    use anyhow::Context;
    let path = file().context("HOME is not set: nowhere to pin the receipt key")?;
    let mut pins: Map<String, Value> = match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text).with_context(|| {
            format!(
                "{} is not a JSON object; it is left as it is",
                path.display()
            )
        })?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Map::new(),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let before = pins.insert(server_key(server), Value::from(key.to_text()));
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    super::files::write_atomically(
        &path,
        &(serde_json::to_string_pretty(&Value::Object(pins))? + "\n"),
    )?;
    Ok(before
        .and_then(|v| v.as_str().map(str::to_string))
        .filter(|old| *old != key.to_text()))
}

/// `sayso hook install`'s pin: fetches the server's key and pins it; the line to print. A
/// server that cannot be asked leaves the hook unpinned, which the doctor then reports.
pub async fn pin_from_server(server: &str, dry_run: bool) -> String {
    let where_ = file().map_or_else(|| "~/.config/sayso".into(), |f| f.display().to_string());
    if dry_run {
        return format!("would pin the receipt key of {server} in {where_}");
    }
    let key = match crate::client::receipts::fetch_public_key(server).await {
        Ok(key) => key,
        Err(e) => return format!("could not pin the receipt key: {e:#}"),
    };
    match pin(server, &key) {
        Ok(None) => format!(
            "pinned the receipt key of {server} (key id {}) in {where_}: the hook allows only \
             on receipts it signed",
            key.key_id()
        ),
        Ok(Some(old)) => format!(
            "pinned the new receipt key of {server} (key id {}) in {where_}, in place of {old}",
            key.key_id()
        ),
        Err(e) => format!("could not pin the receipt key: {e:#}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn servers_are_keyed_without_a_trailing_slash() {
        assert_eq!(server_key(" http://h:8080/ "), "http://h:8080");
        assert_eq!(server_key("https://h/sayso"), "https://h/sayso");
    }
}
