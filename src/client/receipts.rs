//! `sayso receipts` (the inbox's chain of signed receipts, or one decision's) and `sayso
//! verify` (checks receipts offline against the server's public key; docs/CLI.md).

use std::io::Read;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use reqwest::Method;
use serde_json::Value;
use tokio::time::Instant;

use super::args::ServerArgs;
use super::commands::{REQUEST_TIMEOUT, RETRY_WINDOW};
use super::flags::usage;
use super::http::Api;
use super::wait::EXIT_YES;
use crate::domain::receipt::{PublicKey, SignedReceipt, verify, verify_chain};

/// How long fetching the public key may take: `sayso hook install` waits on it.
const KEY_TIMEOUT: Duration = Duration::from_secs(10);

/// `sayso receipts`: the inbox's receipts as JSON lines, oldest first.
#[derive(Debug, Clone, Args)]
pub struct ReceiptsArgs {
    /// The first receipt (its `seq`) to print.
    #[arg(
        long,
        default_value_t = 1,
        value_name = "SEQ",
        conflicts_with = "decision"
    )]
    pub from: u64,
    /// Print only this decision's receipt, with what was asked.
    #[arg(long, value_name = "ID")]
    pub decision: Option<String>,
    /// Print the server's public receipt key instead (what `sayso verify --key` takes).
    #[arg(long, conflicts_with_all = ["decision", "from"])]
    pub public_key: bool,
    #[command(flatten)]
    pub server: ServerArgs,
}

/// `sayso verify`: checks receipts against the server's public key.
#[derive(Debug, Clone, Args)]
pub struct VerifyArgs {
    /// A file of receipts as `sayso receipts` prints them (JSON lines), one receipt as
    /// `GET /v1/decisions/{id}/receipt` gives it, or a page of `GET /v1/receipts`; `-` reads
    /// stdin.
    pub file: String,
    /// The server's public receipt key (`sayso receipts --public-key`,
    /// `GET /v1/receipts/key`).
    // URL-safe base64: one key in 64 begins with `-`, and is still the value.
    #[arg(
        long,
        env = "SAYSO_RECEIPT_KEY",
        value_name = "KEY",
        conflicts_with = "key_file",
        allow_hyphen_values = true
    )]
    pub key: Option<String>,
    /// A file holding the public receipt key, as `--key` takes it.
    #[arg(long, value_name = "PATH")]
    pub key_file: Option<PathBuf>,
}

/// `sayso receipts`.
pub async fn receipts(args: ReceiptsArgs) -> anyhow::Result<u8> {
    if args.public_key {
        let key = fetch_public_key(&args.server.server).await?;
        println!("{}", key.to_text());
        return Ok(EXIT_YES);
    }
    let api = Api::new(&args.server.server, args.server.key.as_deref())?;
    let read = |url: reqwest::Url| {
        let api = &api;
        async move {
            api.send(
                || api.request(Method::GET, url.clone(), REQUEST_TIMEOUT),
                Instant::now() + RETRY_WINDOW,
            )
            .await
        }
    };
    if let Some(id) = &args.decision {
        let one = read(api.url(&["v1", "decisions", id, "receipt"])).await?;
        println!("{one}");
        return Ok(EXIT_YES);
    }
    let mut from = Some(args.from.max(1));
    while let Some(seq) = from {
        let mut url = api.url(&["v1", "receipts"]);
        url.query_pairs_mut()
            .append_pair("from", &seq.to_string())
            .append_pair("limit", "500");
        let page = read(url).await?;
        for r in page["items"].as_array().into_iter().flatten() {
            println!("{r}");
        }
        from = page["next_from"].as_u64();
    }
    Ok(EXIT_YES)
}

/// `sayso verify`.
pub async fn verify_file(args: VerifyArgs) -> anyhow::Result<u8> {
    let key = match (&args.key, &args.key_file) {
        (Some(k), _) => PublicKey::parse(k).map_err(|e| usage(format!("--key: {e}")))?,
        (None, Some(path)) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read the key file {}", path.display()))?;
            PublicKey::parse(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?
        }
        (None, None) => {
            return Err(usage(
                "no key to check against: pass --key KEY or --key-file PATH (`sayso receipts \
                 --public-key` prints the server's; pin it once, then check offline)",
            ));
        }
    };
    let text = if args.file == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .context("cannot read stdin")?;
        s
    } else {
        std::fs::read_to_string(&args.file).with_context(|| format!("cannot read {}", args.file))?
    };
    let receipts = read_receipts(&text)?;
    match receipts.as_slice() {
        [] => anyhow::bail!("{}: holds no receipt", args.file),
        [one] => {
            let v = verify(one, &key)?;
            let r = &v.receipt;
            let outcome = r
                .outcome
                .as_ref()
                .map_or_else(String::new, |o| format!(" {o}"));
            println!(
                "ok: receipt {} of decision {} ({}{outcome}), signed by key {}{}",
                r.seq,
                r.decision_id,
                r.status,
                r.key_id,
                if one.asked.is_some() {
                    "; what was asked matches its hash"
                } else {
                    ""
                }
            );
        }
        many => {
            let chain = verify_chain(many, &key)?
                .ok_or_else(|| anyhow::anyhow!("{}: holds no receipt", args.file))?;
            println!(
                "ok: {} receipts of inbox {}, seq {} to {}, unbroken, signed by key {}; last \
                 sha256 {}",
                many.len(),
                chain.inbox_id,
                chain.first_seq,
                chain.last_seq,
                key.key_id(),
                chain.last_sha256
            );
        }
    }
    Ok(EXIT_YES)
}

/// The receipts in `text`: JSON values one after another, each a receipt or a page of them
/// (`{"items": […]}`).
fn read_receipts(text: &str) -> anyhow::Result<Vec<SignedReceipt>> {
    let mut out = Vec::new();
    for (i, value) in serde_json::Deserializer::from_str(text)
        .into_iter::<Value>()
        .enumerate()
    {
        let value = value.with_context(|| format!("value {} is not JSON", i + 1))?;
        let items = match value.get("items").and_then(Value::as_array) {
            Some(items) => items.clone(),
            None => vec![value],
        };
        for item in items {
            out.push(serde_json::from_value(item).with_context(|| {
                format!(
                    "value {} is not a receipt (receipt, signature, sha256 expected)",
                    i + 1
                )
            })?);
        }
    }
    Ok(out)
}

/// The server's public receipt key, `GET /v1/receipts/key` (no API key needed).
pub async fn fetch_public_key(server: &str) -> anyhow::Result<PublicKey> {
    let mut url = reqwest::Url::parse(server.trim())
        .map_err(|e| anyhow::anyhow!("--server / SAYSO_URL {server:?} is not a URL: {e}"))?;
    url.path_segments_mut()
        .map_err(|()| anyhow::anyhow!("--server / SAYSO_URL {server:?} is not an http(s) URL"))?
        .pop_if_empty()
        .extend(["v1", "receipts", "key"]);
    let _ = rustls::crypto::ring::default_provider().install_default();
    let resp = reqwest::Client::new()
        .get(url.clone())
        .timeout(KEY_TIMEOUT)
        .send()
        .await
        .with_context(|| format!("cannot fetch the receipt key from {url}"))?;
    if !resp.status().is_success() {
        anyhow::bail!(
            "cannot fetch the receipt key from {url}: {} (a sayso server older than receipts?)",
            resp.status()
        );
    }
    let body: Value = resp
        .json()
        .await
        .with_context(|| format!("{url} did not answer JSON"))?;
    let text = body["public_key"]
        .as_str()
        .ok_or_else(|| anyhow::anyhow!("{url} gave no public_key"))?;
    PublicKey::parse(text).map_err(|e| anyhow::anyhow!("{url}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn receipts_are_read_from_lines_pages_and_single_objects() {
        let r = r#"{"receipt": {"seq": 1}, "signature": "s", "sha256": "h"}"#;
        assert_eq!(read_receipts(&format!("{r}\n{r}\n")).unwrap().len(), 2);
        assert_eq!(
            read_receipts(&format!(
                r#"{{"items": [{r}, {r}, {r}], "next_from": null}}"#
            ))
            .unwrap()
            .len(),
            3
        );
        let e = read_receipts("{\"nope\": 1}").unwrap_err();
        assert!(format!("{e:#}").contains("not a receipt"), "{e:#}");
        assert!(read_receipts("{").is_err());
    }
}
