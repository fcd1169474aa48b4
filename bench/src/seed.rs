//! A grown database, made fast: rows written straight into the tables, each a copy of a
//! decision the server itself made through its API (its spec, outcome, answers and audit
//! trail), moved in time. A million decisions through the API would take minutes of the
//! run; copied in SQL they take seconds, and they are the server's own rows all the same.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow};
use serde_json::{Value, json};
use sqlx::Connection;

use crate::server::Server;

/// The database of one server of the scenario.
#[derive(Clone)]
pub enum Db {
    Sqlite(PathBuf),
    Postgres(String),
}

impl Db {
    pub fn url(&self) -> String {
        match self {
            Db::Sqlite(path) => format!("sqlite://{}", path.display()),
            Db::Postgres(url) => url.clone(),
        }
    }

    /// Bytes on disk: the file and its WAL, or `pg_database_size`.
    pub async fn size(&self) -> Result<u64> {
        match self {
            Db::Sqlite(path) => {
                let mut wal = path.clone().into_os_string();
                wal.push("-wal");
                let wal = std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
                Ok(std::fs::metadata(path)?.len() + wal)
            }
            Db::Postgres(url) => {
                let mut conn = sqlx::PgConnection::connect(url).await?;
                let (n,): (i64,) = sqlx::query_as("SELECT pg_database_size(current_database())")
                    .fetch_one(&mut conn)
                    .await?;
                Ok(n as u64)
            }
        }
    }

    /// One number from a query (a count), on a connection of its own.
    pub async fn count(&self, sqlite: &str, postgres: &str) -> Result<i64> {
        match self {
            Db::Sqlite(path) => {
                let (path, sql) = (path.clone(), sqlite.to_string());
                tokio::task::spawn_blocking(move || -> Result<i64> {
                    let conn = rusqlite::Connection::open_with_flags(
                        &path,
                        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
                    )?;
                    Ok(conn.query_row(&sql, [], |r| r.get(0))?)
                })
                .await?
            }
            Db::Postgres(url) => {
                let mut conn = sqlx::PgConnection::connect(url).await?;
                let (n,): (i64,) = sqlx::query_as(sqlx::AssertSqlSafe(postgres.to_string()))
                    .fetch_one(&mut conn)
                    .await?;
                Ok(n)
            }
        }
    }
}

/// Decisions the server made through its API, whose rows the seed copies: one pending with
/// the longest time to live, one answered on its page, and (when asked for) one the expiry
/// sweep expired.
pub struct Templates {
    pending: String,
    pub(crate) answered: String,
    pub(crate) expired: Option<String>,
}

/// The decisions a seed writes.
#[derive(Clone, Copy)]
pub enum Shape {
    /// A third each pending, answered and expired, created over the last 29 days (the
    /// pending ones expire 30 days after they were made, so none is due).
    Mixed,
    /// Pending, made one to two days ago with an hour to live: due for the expiry sweep.
    DueForExpiry,
    /// Answered 40 to 60 days ago: past a retention of 30 days.
    ResolvedLongAgo,
}

const DAY_MS: i64 = 86_400_000;
const QUESTION: &str = "Deploy the build to staging?";

impl Templates {
    /// Makes the templates on `server`; with `expired`, also waits (about 11 s) for the
    /// expiry sweep to expire one made with the shortest time to live.
    pub async fn make(server: &Server, expired: bool) -> Result<Templates> {
        let short = if expired {
            Some(
                server
                    .create(
                        &json!({"question": QUESTION, "kind": "bool", "notify": "none",
                        "ttl_seconds": 10}),
                    )
                    .await?,
            )
        } else {
            None
        };
        let pending = server
            .create(
                &json!({"question": QUESTION, "kind": "bool", "notify": "none",
                "ttl_minutes": 43_200}),
            )
            .await?;
        let answered = server
            .create(&json!({"question": QUESTION, "kind": "bool", "notify": "none"}))
            .await?;
        let resp = server
            .client
            .post(answered["web_url"].as_str().unwrap_or(""))
            .json(&json!({"value": "yes"}))
            .send()
            .await?;
        if !resp.status().is_success() {
            return Err(anyhow!("answering the template got {}", resp.status()));
        }
        let expired = match short {
            Some(short) => {
                let id = id_of(&short)?;
                let deadline = Instant::now() + Duration::from_secs(40);
                loop {
                    let v: Value = server
                        .client
                        .get(format!("{}/v1/decisions/{id}", server.base))
                        .bearer_auth(&server.key)
                        .send()
                        .await?
                        .json()
                        .await?;
                    if v["status"] == "expired" {
                        break Some(id);
                    }
                    if Instant::now() > deadline {
                        return Err(anyhow!("the template never expired: {v}"));
                    }
                    tokio::time::sleep(Duration::from_millis(250)).await;
                }
            }
            None => None,
        };
        // Their receipts made now (the sweep's resolution waits for the next reader), so
        // that the seeded copies' receipts can follow them (`chain_seeded`).
        for id in [Some(id_of(&answered)?), expired.clone()]
            .into_iter()
            .flatten()
        {
            let resp = server
                .client
                .get(format!("{}/v1/decisions/{id}/receipt", server.base))
                .bearer_auth(&server.key)
                .send()
                .await?;
            if !resp.status().is_success() {
                return Err(anyhow!("the template's receipt: {}", resp.status()));
            }
        }
        Ok(Templates {
            pending: id_of(&pending)?,
            answered: id_of(&answered)?,
            expired,
        })
    }

    /// For each of `n` rows of `shape`: the template it copies, when it was made (ms since
    /// the epoch) and, when not the template's own, when it expires.
    fn plan(&self, shape: Shape, n: usize, now_ms: i64) -> Result<Vec<(&str, i64, Option<i64>)>> {
        let span = |from_days: i64, to_days: i64| {
            let (start, end) = (now_ms - from_days * DAY_MS, now_ms - to_days * DAY_MS);
            move |i: usize| start + (end - start) * i as i64 / n.max(1) as i64
        };
        Ok(match shape {
            Shape::Mixed => {
                let expired = self
                    .expired
                    .as_deref()
                    .context("a mixed seed needs the expired template")?;
                // Made more than an hour ago, so the answered ones were answered and the
                // expired ones expired before now.
                let at = span(29, 0);
                (0..n)
                    .map(|i| {
                        let t = [&*self.pending, &*self.answered, expired][i % 3];
                        (t, at(i).min(now_ms - 3_600_000), None)
                    })
                    .collect()
            }
            Shape::DueForExpiry => {
                let at = span(2, 1);
                (0..n)
                    .map(|i| (&*self.pending, at(i), Some(at(i) + 3_600_000)))
                    .collect()
            }
            Shape::ResolvedLongAgo => {
                let at = span(60, 40);
                (0..n).map(|i| (&*self.answered, at(i), None)).collect()
            }
        })
    }
}

fn id_of(v: &Value) -> Result<String> {
    v["decision_id"]
        .as_str()
        .map(String::from)
        .with_context(|| format!("no decision_id in {v}"))
}

/// Writes `n` decisions of `shape` into `db` (whose server is stopped, or, on PostgreSQL,
/// may run) and returns how long it took.
pub async fn seed(db: &Db, templates: &Templates, shape: Shape, n: usize) -> Result<Duration> {
    let now_ms = time::OffsetDateTime::now_utc().unix_timestamp_nanos() as i64 / 1_000_000;
    let started = Instant::now();
    match db {
        Db::Sqlite(path) => {
            let plan: Vec<(String, i64, Option<i64>)> = templates
                .plan(shape, n, now_ms)?
                .into_iter()
                .map(|(t, at, expires)| (t.to_string(), at, expires))
                .collect();
            let path = path.clone();
            tokio::task::spawn_blocking(move || seed_sqlite(&path, &plan)).await??;
        }
        Db::Postgres(url) => seed_postgres(url, templates, shape, n, now_ms).await?,
    }
    Ok(started.elapsed())
}

/// The columns of `decisions` the seed copies from its template, after `id`, `created_at`,
/// `expires_at` and `resolved_at`.
const COPIED: &str = "inbox_id, kind, question, project, spec, default_outcome, status, outcome, \
    outcome_source, custom, remark, idempotency_key, request_hash, has_image, answered_via, \
    answered_device, answers, cancel_reason";

/// SQLite: one prepared statement a row (and one more for its audit trail), in transactions
/// of 50 000 rows. The `created` event and the day's usage come from the table's own
/// trigger, as for every create.
fn seed_sqlite(path: &std::path::Path, plan: &[(String, i64, Option<i64>)]) -> Result<()> {
    let mut conn = rusqlite::Connection::open(path)?;
    // A seed need not survive a crash, and its indexes fit in 256 MB of cache.
    conn.pragma_update(None, "synchronous", "OFF")?;
    conn.pragma_update(None, "cache_size", "-262144")?;
    conn.busy_timeout(Duration::from_secs(30))?;
    let template_made: std::collections::HashMap<String, i64> = {
        let mut q = conn.prepare("SELECT created_at FROM decisions WHERE id = ?1")?;
        let mut out = std::collections::HashMap::new();
        for (t, _, _) in plan {
            if !out.contains_key(t) {
                out.insert(t.clone(), q.query_row([t], |r| r.get(0))?);
            }
        }
        out
    };
    for chunk in plan.chunks(50_000) {
        let tx = conn.transaction()?;
        {
            let mut decision = tx.prepare(&format!(
                "INSERT INTO decisions (id, created_at, expires_at, resolved_at, {COPIED}) \
                 SELECT ?1, created_at + ?2, COALESCE(?3, expires_at + ?2), resolved_at + ?2, \
                 {COPIED} FROM decisions WHERE id = ?4"
            ))?;
            let mut events = tx.prepare(
                "INSERT INTO decision_events (decision_id, at, kind, detail) \
                 SELECT ?1, at + ?2, kind, detail FROM decision_events \
                 WHERE decision_id = ?3 AND kind <> 'created' ORDER BY id",
            )?;
            for (template, at, expires) in chunk {
                let shift = at - template_made[template];
                let id = uuid_v7_at(*at).to_string();
                decision.execute(rusqlite::params![id, shift, expires, template])?;
                events.execute(rusqlite::params![id, shift, template])?;
            }
        }
        tx.commit()?;
    }
    conn.pragma_update(None, "wal_checkpoint", "TRUNCATE")?;
    Ok(())
}

/// A UUIDv7 of the millisecond `ms`, as the server makes ids (random in the rest).
fn uuid_v7_at(ms: i64) -> uuid::Uuid {
    let ts = uuid::Timestamp::from_unix(
        uuid::NoContext,
        (ms / 1000) as u64,
        ((ms % 1000) * 1_000_000) as u32,
    );
    uuid::Uuid::new_v7(ts)
}

/// PostgreSQL: one statement, `generate_series` over the rows, the ids UUIDv7 of each row's
/// creation time made in SQL, and the audit trail copied in the same statement.
async fn seed_postgres(
    url: &str,
    templates: &Templates,
    shape: Shape,
    n: usize,
    now_ms: i64,
) -> Result<()> {
    let (from_days, to_days) = match shape {
        Shape::Mixed => (29, 0),
        Shape::DueForExpiry => (2, 1),
        Shape::ResolvedLongAgo => (60, 40),
    };
    let ids: Vec<&str> = match shape {
        Shape::Mixed => vec![
            &templates.pending,
            &templates.answered,
            templates
                .expired
                .as_deref()
                .context("a mixed seed needs the expired template")?,
        ],
        Shape::DueForExpiry => vec![&templates.pending],
        Shape::ResolvedLongAgo => vec![&templates.answered],
    };
    let due = matches!(shape, Shape::DueForExpiry);
    // The rows first, then their audit trails from the templates' (shifted like the rows):
    // two statements in one transaction, each over the whole series.
    let mut conn = sqlx::PgConnection::connect(url).await?;
    let mut tx = conn.begin().await?;
    sqlx::query("CREATE TEMP TABLE seeded (id uuid, template uuid, shift interval) ON COMMIT DROP")
        .execute(&mut *tx)
        .await?;
    let (start, end) = (now_ms - from_days * DAY_MS, now_ms - to_days * DAY_MS);
    let t_copied = COPIED
        .split(", ")
        .map(|c| format!("t.{}", c.trim()))
        .collect::<Vec<_>>()
        .join(", ");
    let insert = format!(
        "WITH made AS ( \
           SELECT g, t.id AS template, t.created_at, t.expires_at, t.resolved_at, \
                  ms, to_timestamp(ms / 1000.0) - t.created_at AS shift, \
                  encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid()) placing \
                    substring(int8send(ms) FROM 3) FROM 1 FOR 6), 52, 1), 53, 1), 'hex')::uuid AS id \
           FROM generate_series(0, $1::bigint - 1) g \
           CROSS JOIN LATERAL (SELECT least($3::bigint + ($4::bigint - $3::bigint) * g / $1::bigint, \
                                            $5::bigint) AS ms) m \
           JOIN decisions t ON t.id = ($2::text[])[g % cardinality($2::text[]) + 1]::uuid), \
         kept AS (INSERT INTO seeded SELECT id, template, shift FROM made) \
         INSERT INTO decisions (id, created_at, expires_at, resolved_at, {COPIED}) \
         SELECT made.id, made.created_at + made.shift, \
                CASE WHEN $6 THEN made.created_at + made.shift + interval '1 hour' \
                     ELSE made.expires_at + made.shift END, \
                made.resolved_at + made.shift, {t_copied} \
         FROM made JOIN decisions t ON t.id = made.template ORDER BY made.g"
    );
    sqlx::query(sqlx::AssertSqlSafe(insert))
        .bind(n as i64)
        .bind(&ids)
        .bind(start)
        .bind(end)
        .bind(if matches!(shape, Shape::Mixed) {
            now_ms - 3_600_000
        } else {
            i64::MAX
        })
        .bind(due)
        .execute(&mut *tx)
        .await
        .context("seeding decisions")?;
    sqlx::query(
        "INSERT INTO decision_events (decision_id, at, kind, detail) \
         SELECT s.id, e.at + s.shift, e.kind, e.detail FROM seeded s \
         JOIN decision_events e ON e.decision_id = s.template ORDER BY s.id, e.id",
    )
    .execute(&mut *tx)
    .await
    .context("seeding the audit trails")?;
    tx.commit().await?;
    // What autovacuum would soon do after so many inserts: the planner's statistics.
    sqlx::query("ANALYZE decisions, decision_events")
        .execute(&mut conn)
        .await?;
    Ok(())
}

impl Db {
    /// The rows of a query, each column as JSON (text, integer or null).
    pub(crate) async fn rows(&self, sql: &str) -> Result<Vec<Vec<Value>>> {
        match self {
            Db::Sqlite(path) => {
                let (path, sql) = (path.clone(), sql.to_string());
                tokio::task::spawn_blocking(move || -> Result<Vec<Vec<Value>>> {
                    let conn = rusqlite::Connection::open_with_flags(
                        &path,
                        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
                    )?;
                    let mut q = conn.prepare(&sql)?;
                    let n = q.column_count();
                    let rows = q
                        .query_map([], |r| {
                            (0..n)
                                .map(|i| {
                                    Ok(match r.get_ref(i)? {
                                        rusqlite::types::ValueRef::Integer(v) => json!(v),
                                        rusqlite::types::ValueRef::Text(t) => {
                                            json!(String::from_utf8_lossy(t))
                                        }
                                        _ => Value::Null,
                                    })
                                })
                                .collect::<rusqlite::Result<Vec<Value>>>()
                        })?
                        .collect::<rusqlite::Result<Vec<_>>>()?;
                    Ok(rows)
                })
                .await?
            }
            Db::Postgres(url) => {
                use sqlx::{Column, Row, TypeInfo};
                let mut conn = sqlx::PgConnection::connect(url).await?;
                let rows = sqlx::query(sqlx::AssertSqlSafe(sql.to_string()))
                    .fetch_all(&mut conn)
                    .await?;
                rows.iter()
                    .map(|r| {
                        r.columns()
                            .iter()
                            .map(|c| {
                                Ok(match c.type_info().name() {
                                    "INT8" => json!(r.try_get::<Option<i64>, _>(c.ordinal())?),
                                    "INT4" => json!(r.try_get::<Option<i32>, _>(c.ordinal())?),
                                    _ => json!(r.try_get::<Option<String>, _>(c.ordinal())?),
                                })
                            })
                            .collect()
                    })
                    .collect()
            }
        }
    }

    /// Writes receipts given as `[inbox_id, seq, decision_id, event_id, receipt, signature,
    /// sha256]`.
    pub(crate) async fn insert_receipts(&self, rows: Vec<Value>) -> Result<()> {
        match self {
            Db::Sqlite(path) => {
                let path = path.clone();
                tokio::task::spawn_blocking(move || -> Result<()> {
                    let mut conn = rusqlite::Connection::open(&path)?;
                    conn.busy_timeout(Duration::from_secs(30))?;
                    conn.pragma_update(None, "synchronous", "OFF")?;
                    conn.pragma_update(None, "cache_size", "-262144")?;
                    let tx = conn.transaction()?;
                    {
                        let mut insert = tx.prepare(
                            "INSERT INTO receipts (inbox_id, seq, decision_id, event_id, receipt, \
                             signature, sha256) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                        )?;
                        for r in &rows {
                            insert.execute(rusqlite::params![
                                r[0].as_str(),
                                r[1].as_i64(),
                                r[2].as_str(),
                                r[3].as_i64(),
                                r[4].as_str(),
                                r[5].as_str(),
                                r[6].as_str()
                            ])?;
                        }
                    }
                    tx.commit()?;
                    conn.pragma_update(None, "wal_checkpoint", "TRUNCATE")?;
                    Ok(())
                })
                .await?
            }
            Db::Postgres(url) => {
                let mut conn = sqlx::PgConnection::connect(url).await?;
                for chunk in rows.chunks(20_000) {
                    let col = |i: usize| -> Vec<String> {
                        chunk
                            .iter()
                            .map(|r| match &r[i] {
                                Value::String(s) => s.clone(),
                                other => other.to_string(),
                            })
                            .collect()
                    };
                    sqlx::query(
                        "INSERT INTO receipts (inbox_id, seq, decision_id, event_id, receipt, \
                         signature, sha256) \
                         SELECT i::uuid, s::bigint, d::uuid, e::bigint, r, g, h \
                         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], \
                                     $6::text[], $7::text[]) AS t(i, s, d, e, r, g, h)",
                    )
                    .bind(col(0))
                    .bind(col(1))
                    .bind(col(2))
                    .bind(col(3))
                    .bind(col(4))
                    .bind(col(5))
                    .bind(col(6))
                    .execute(&mut conn)
                    .await?;
                }
                Ok(())
            }
        }
    }
}
