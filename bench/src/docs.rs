//! Writes a run into docs/PERFORMANCE.md: a full run's tables, section by section, and
//! `bench million`'s table. Each goes between a pair of markers the document keeps
//! (`<!-- bench:run -->` … `<!-- /bench:run -->`, `<!-- bench:million -->` …), so the prose
//! around them stays as written and the figures are always the last run's.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};

use crate::report::{Row, markdown_table};

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

/// Replaces the run's tables in `path`.
pub fn write(path: &Path, sections: &[Section], elapsed_s: f64) -> Result<()> {
    rewrite(path, "bench:run", &run_text(sections, elapsed_s))
}

/// Replaces the million's table in `path`.
pub fn write_million(path: &Path, rows: &[Row], elapsed_s: f64) -> Result<()> {
    rewrite(path, "bench:million", &million_text(rows, elapsed_s))
}

fn rewrite(path: &Path, marker: &str, text: &str) -> Result<()> {
    let doc =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let doc = replace_between(&doc, marker, text)?;
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

/// The million's table, dated and with the machine it ran on.
fn million_text(rows: &[Row], elapsed_s: f64) -> String {
    let date = time::OffsetDateTime::now_utc().date();
    format!(
        "Written by `./target/release/bench million` on {date}, {} (the run took {:.0} s).\n\n{}",
        machine(),
        elapsed_s,
        markdown_table(rows)
    )
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
