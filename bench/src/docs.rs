//! Writes a full run into docs/PERFORMANCE.md: its tables, section by section, and the
//! projection to a million waiting agents computed from the same figures. Each goes between
//! a pair of markers the document keeps (`<!-- bench:run -->` … `<!-- /bench:run -->`), so the
//! prose around them stays as written and the figures are always the last run's.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};

use crate::report::{Row, figure, markdown_table, value_of};

/// The rows of one part of the run, under a heading of their own.
pub struct Section {
    pub title: &'static str,
    pub rows: Vec<Row>,
}

/// docs/PERFORMANCE.md of the workspace the benchmark was built in.
pub fn performance_md() -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/PERFORMANCE.md");
    path.canonicalize().unwrap_or(path)
}

/// Replaces the run's tables and the projection in `path`.
pub fn write(path: &Path, sections: &[Section], elapsed_s: f64) -> Result<()> {
    let doc =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let doc = replace_between(&doc, "bench:run", &run_text(sections, elapsed_s))?;
    let all: Vec<Row> = sections.iter().flat_map(|s| s.rows.clone()).collect();
    let doc = replace_between(&doc, "bench:projection", &projection(&all))?;
    std::fs::write(path, doc).with_context(|| format!("writing {}", path.display()))
}

fn replace_between(doc: &str, marker: &str, text: &str) -> Result<String> {
    // A marker counts only on a line of its own, so the prose may name it.
    let begin = format!("\n<!-- {marker} -->\n");
    let end = format!("\n<!-- /{marker} -->\n");
    let start = doc
        .find(&begin)
        .ok_or_else(|| anyhow!("the document has no {} line", begin.trim()))?
        + begin.len();
    let stop = doc[start..]
        .find(&end)
        .ok_or_else(|| anyhow!("the document has no {} line", end.trim()))?
        + start;
    Ok(format!(
        "{}{}{}",
        &doc[..start],
        text.trim_end(),
        &doc[stop..]
    ))
}

fn run_text(sections: &[Section], elapsed_s: f64) -> String {
    let date = time::OffsetDateTime::now_utc().date();
    let mut out = format!(
        "Written by `./target/release/bench` on {date}, {} (the run took {:.0} s).\n",
        machine(),
        elapsed_s
    );
    for s in sections.iter().filter(|s| !s.rows.is_empty()) {
        out.push_str(&format!("\n**{}**\n\n{}", s.title, markdown_table(&s.rows)));
    }
    out
}

/// Cores, memory and the open-files limit of this machine, as the run saw them.
fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let mem_gib = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            let line = m.lines().find(|l| l.starts_with("MemTotal:"))?;
            line.split_whitespace().nth(1)?.parse::<f64>().ok()
        })
        .map_or(0.0, |kb| kb / 1024.0 / 1024.0);
    format!(
        "{cores} cores, {mem_gib:.0} GiB, open files {}",
        open_files_limit().map_or("unknown".into(), |n| n.to_string())
    )
}

/// The hard limit on open files (what a server here can raise its own to).
pub fn open_files_limit() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line.split_whitespace().nth(4)?.parse().ok()
}

/// A million waiting agents, from this run's figures: how many processes the open files
/// call for, how much memory, how many connections, how long the database takes to write
/// their questions; and which of these is met first.
fn projection(rows: &[Row]) -> String {
    const AGENTS: f64 = 1_000_000.0;
    const STREAMS_PER_CONNECTION: f64 = 1_000.0;
    let get = |name: &str| value_of(rows, name);
    let (Some(h2), Some(h1), Some(parked)) = (
        get("fleet: server memory per await, HTTP/2"),
        get("fleet: server memory per await, HTTP/1.1"),
        get("fleet: awaits parked (HTTP/2 + HTTP/1.1)"),
    ) else {
        return "(This run measured no fleet; the projection needs one.)".into();
    };
    let files = open_files_limit().unwrap_or(20_000) as f64;
    let h1_per_process = files - 1_000.0;
    let gb = |bytes_each: f64| AGENTS * bytes_each / 1e9;
    let mut out = String::new();
    out.push_str(&format!(
        "- **Open files, on HTTP/1.1:** a waiting agent holds a connection, so a process holds \
         at most about {} of them (its limit of {} files, less a reserve): {} processes for a \
         million.\n",
        figure(h1_per_process),
        figure(files),
        (AGENTS / h1_per_process).ceil()
    ));
    out.push_str(&format!(
        "- **Over HTTP/2** a connection carries up to {} waiting requests \
         (`SAYSO_H2_MAX_STREAMS`): a million need {} connections, which one process holds.\n",
        figure(STREAMS_PER_CONNECTION),
        figure(AGENTS / STREAMS_PER_CONNECTION)
    ));
    out.push_str(&format!(
        "- **Memory:** {} bytes a waiting request on HTTP/2 and {} on HTTP/1.1 (measured with \
         {} parked in one process): {:.1} GB for a million on HTTP/2, {:.1} GB on HTTP/1.1.\n",
        figure(h2),
        figure(h1),
        figure(parked),
        gb(h2),
        gb(h1)
    ));
    if let (Some(p50), Some(p99)) = (
        get("fleet: answer → wake p50"),
        get("fleet: answer → wake p99"),
    ) {
        out.push_str(&format!(
            "- **Wakes** stay cheap while they wait: answer → wake p50 {p50:.1} ms, p99 {p99:.1} ms \
             among the fleet{}.\n",
            get("replicas: answer → wake on another, p99")
                .map(|r| format!(", p99 {r:.1} ms across replicas"))
                .unwrap_or_default()
        ));
    }
    let creates = get("replicas: creates, 3 writing vs pgbench")
        .into_iter()
        .chain(get("create, PostgreSQL (req/s)"))
        .fold(0.0_f64, f64::max);
    if creates > 0.0 {
        out.push_str(&format!(
            "- **The database:** waiting costs it nothing (one `LISTEN` connection a replica); \
             the questions' creates do: {} creates/s at best here, so a million agents asking at \
             once are written in {:.0} s.\n",
            figure(creates),
            AGENTS / creates
        ));
    }
    let memory_replicas = (gb(h2) / 8.0).ceil();
    out.push_str(&format!(
        "\nSo: on HTTP/1.1 the first limit is open files ({} processes); behind an HTTP/2 \
         proxy it is memory, {:.0} replicas of 8 GB{}.\n",
        (AGENTS / h1_per_process).ceil(),
        memory_replicas,
        if creates > 0.0 {
            ", then the database's commit rate during a burst of creates"
        } else {
            ""
        }
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::replace_between;

    #[test]
    fn only_a_marker_on_a_line_of_its_own_counts() {
        let doc = "Between the `<!-- x -->` markers below.\n<!-- x -->\nold\n<!-- /x -->\nrest\n";
        let out = replace_between(doc, "x", "new\n").unwrap();
        assert_eq!(
            out,
            "Between the `<!-- x -->` markers below.\n<!-- x -->\nnew\n<!-- /x -->\nrest\n"
        );
        assert!(replace_between("no markers", "x", "new").is_err());
    }
}
