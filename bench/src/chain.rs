//! The receipts of a seeded database, chained as the server would have chained them: each
//! seeded decision's receipt is its template's, with its own sequence number, predecessor,
//! id and times, signed again with the server's key.

use anyhow::{Context, Result, anyhow};
use serde_json::{Value, json};

use crate::seed::{Db, Templates};

/// The receipts of the seeded resolutions (docs/SECURITY.md, Receipts), as the server's
/// chainer would have written them one by one as each was resolved: signed with the
/// server's own key, in the order of the resolution events, each after the one before.
///
/// The server chains a backlog at about 1 400 receipts a second on SQLite and 250 on
/// PostgreSQL (a commit each), minutes for the seeded resolutions; left unchained, the first
/// answer on the grown database would set its chainer to work through them all while the
/// rates are measured. A seeded decision copies its template, so its receipt is the
/// template's with its own sequence number, predecessor, id and times; the copy of each
/// template's own receipt is checked to come out byte for byte as the server signed it.
/// Returns how many receipts were written.
pub async fn chain_seeded(db: &Db, templates: &Templates) -> Result<usize> {
    let expired = templates
        .expired
        .as_deref()
        .context("chaining needs the expired template")?;
    let sql_ms = |col: &str| match db {
        Db::Sqlite(_) => col.to_string(),
        Db::Postgres(_) => format!("(extract(epoch FROM {col}) * 1000)::bigint"),
    };
    let text = |col: &str| match db {
        Db::Sqlite(_) => col.to_string(),
        Db::Postgres(_) => format!("{col}::text"),
    };
    let mut rows: Vec<Vec<Value>> = db
        .rows("SELECT value FROM settings WHERE name = 'receipt_signing_key'")
        .await?;
    let seed = rows
        .pop()
        .and_then(|r| r[0].as_str().map(String::from))
        .context("no receipt signing key: no receipt was made yet")?;
    use base64::Engine;
    let seed = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(seed.trim())?;
    let key = ring::signature::Ed25519KeyPair::from_seed_unchecked(&seed)
        .map_err(|e| anyhow!("the receipt key: {e}"))?;

    // The templates' receipts, and the check that they come out as the server wrote them.
    let mut model = std::collections::HashMap::new();
    for (status, id) in [
        ("answered", &templates.answered),
        ("expired", &expired.to_string()),
    ] {
        let found = db
            .rows(&format!(
                "SELECT r.receipt, r.signature, r.sha256, {}, {} FROM receipts r \
                 JOIN decisions d ON d.id = r.decision_id WHERE {} = '{id}'",
                sql_ms("d.created_at"),
                sql_ms("COALESCE(d.resolved_at, d.expires_at)"),
                text("r.decision_id"),
            ))
            .await?;
        let r = found
            .first()
            .with_context(|| format!("the {status} template has no receipt"))?;
        let stored = r[0].as_str().context("receipt")?.to_string();
        let receipt: Value = serde_json::from_str(&stored)?;
        let (made, resolved) = (r[3].as_i64().context("ms")?, r[4].as_i64().context("ms")?);
        let mut copy = receipt.clone();
        retime(&mut copy, made, resolved)?;
        let (again, sha, signature) = signed(&key, &copy);
        if again != stored
            || sha != r[2].as_str().unwrap_or("")
            || signature != r[1].as_str().unwrap_or("")
        {
            return Err(anyhow!(
                "the {status} template's receipt does not come out as the server signed it:\n{stored}\n{again}"
            ));
        }
        model.insert(status, receipt);
    }

    // The head of the chain, and every resolution after it, in event order.
    let head = db
        .rows(&format!(
            "SELECT {}, seq, sha256, event_id FROM receipts ORDER BY seq DESC LIMIT 1",
            text("inbox_id")
        ))
        .await?;
    let head = head.first().context("no receipt yet")?;
    let inbox = head[0].as_str().context("inbox")?.to_string();
    let (mut seq, mut prev) = (
        head[1].as_i64().context("seq")?,
        head[2].as_str().context("sha256")?.to_string(),
    );
    let after = head[3].as_i64().context("event_id")?;
    let todo = db
        .rows(&format!(
            "SELECT e.id, {}, d.status, {}, {} FROM decision_events e \
             JOIN decisions d ON d.id = e.decision_id \
             WHERE e.id > {after} AND (e.kind = 'answered' OR e.kind = 'declined' \
               OR e.kind = 'cancelled' OR e.kind = 'expired') \
             ORDER BY e.id",
            text("e.decision_id"),
            sql_ms("d.created_at"),
            sql_ms("COALESCE(d.resolved_at, d.expires_at)"),
        ))
        .await?;
    let mut out = Vec::with_capacity(todo.len());
    for r in &todo {
        let status = r[2].as_str().unwrap_or("");
        let mut receipt = model
            .get(status)
            .with_context(|| format!("no template receipt for a {status} decision"))?
            .clone();
        seq += 1;
        receipt["seq"] = json!(seq);
        receipt["prev_sha256"] = json!(prev);
        receipt["decision_id"] = r[1].clone();
        retime(
            &mut receipt,
            r[3].as_i64().context("ms")?,
            r[4].as_i64().context("ms")?,
        )?;
        let (text, sha, signature) = signed(&key, &receipt);
        prev = sha.clone();
        out.push(Value::from(vec![
            json!(inbox),
            json!(seq),
            r[1].clone(),
            r[0].clone(),
            json!(text),
            json!(signature),
            json!(sha),
        ]));
    }
    let n = out.len();
    db.insert_receipts(out).await?;
    Ok(n)
}

/// The receipt's times from a decision's, written as the server writes them (RFC 3339).
fn retime(receipt: &mut Value, made_ms: i64, resolved_ms: i64) -> Result<()> {
    let rfc = |ms: i64| -> Result<String> {
        Ok(
            time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)?
                .format(&time::format_description::well_known::Rfc3339)?,
        )
    };
    receipt["created_at"] = json!(rfc(made_ms)?);
    receipt["resolved_at"] = json!(rfc(resolved_ms)?);
    Ok(())
}

/// The canonical text of a receipt (keys sorted at every level, no blanks), its SHA-256 in
/// hex and its Ed25519 signature in base64url, as the server computes them.
fn signed(key: &ring::signature::Ed25519KeyPair, receipt: &Value) -> (String, String, String) {
    fn sorted(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut entries: Vec<_> = m.iter().collect();
                entries.sort_by(|a, b| a.0.cmp(b.0));
                Value::Object(
                    entries
                        .into_iter()
                        .map(|(k, v)| (k.clone(), sorted(v)))
                        .collect(),
                )
            }
            Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    use base64::Engine;
    use sha2::Digest;
    let text = sorted(receipt).to_string();
    let sha = hex::encode(sha2::Sha256::digest(text.as_bytes()));
    let signature =
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(key.sign(text.as_bytes()).as_ref());
    (text, sha, signature)
}
