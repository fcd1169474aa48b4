//! The table the benchmark prints and the rows of `target/bench.json`.

/// One line of the table: a figure beside its ceiling and its budget.
#[derive(serde::Serialize, Clone)]
pub struct Row {
    scenario: String,
    value: f64,
    unit: &'static str,
    ceiling: Option<f64>,
    ratio: Option<f64>,
    budget: String,
    holds: bool,
}

pub fn ratio_row(scenario: &str, value: f64, ceiling: f64, budget: f64) -> Row {
    let ratio = value / ceiling;
    Row {
        scenario: scenario.into(),
        value,
        unit: "req/s",
        ceiling: Some(ceiling),
        ratio: Some(ratio),
        budget: format!("≥ {:.0} % of the ceiling", budget * 100.0),
        holds: ratio >= budget,
    }
}

impl Row {
    /// The same row, its scenario named after `prefix`.
    pub fn prefixed(mut self, prefix: &str) -> Row {
        self.scenario = format!("{prefix}: {}", self.scenario);
        self
    }

    /// The row with its budget said otherwise than "of the ceiling" (the test is the same).
    pub fn budget_text(mut self, text: &str) -> Row {
        self.budget = text.into();
        self
    }
}

/// A time beside its budget: the figure in ms, the ratio to the budget, and whether it is
/// within it.
pub fn budget_row(scenario: &str, ms: f64, budget_ms: f64) -> Row {
    let ratio = ms / budget_ms;
    Row {
        scenario: scenario.into(),
        value: ms,
        unit: "ms",
        ceiling: Some(budget_ms),
        ratio: Some(ratio),
        budget: format!("≤ {budget_ms} ms"),
        holds: ratio <= 1.0,
    }
}

pub fn plain_row(scenario: &str, value: f64, unit: &'static str, budget: &str, holds: bool) -> Row {
    Row {
        scenario: scenario.into(),
        value,
        unit,
        ceiling: None,
        ratio: None,
        budget: budget.into(),
        holds,
    }
}

/// A part of the run that could not run: a row that says why and does not hold, so a
/// missing part shows as a miss in the table and the document rather than as nothing.
pub fn skipped_row(part: &str, why: &str) -> Row {
    Row {
        scenario: format!("{part}: not run"),
        value: 0.0,
        unit: "",
        ceiling: None,
        ratio: None,
        budget: why.into(),
        holds: false,
    }
}

pub fn print_table(rows: &[Row]) {
    println!(
        "\n{:<44} {:>12} {:>8} {:>12} {:>7}  {:<28} ok",
        "scenario", "value", "unit", "ceiling", "ratio", "budget"
    );
    for r in rows {
        println!(
            "{:<44} {:>12.1} {:>8} {:>12} {:>7}  {:<28} {}",
            r.scenario,
            r.value,
            r.unit,
            r.ceiling.map(|c| format!("{c:.1}")).unwrap_or_default(),
            r.ratio.map(percent).unwrap_or_default(),
            r.budget,
            if r.holds { "yes" } else { "NO" }
        );
    }
}

/// A ratio in percent with one decimal, so that a miss by a hair (49.6 %) never reads as the
/// budget itself (50 %).
fn percent(ratio: f64) -> String {
    format!("{:.1} %", ratio * 100.0)
}

/// The rows as a Markdown table, for docs/PERFORMANCE.md.
pub fn markdown_table(rows: &[Row]) -> String {
    let mut out = String::from(
        "| scenario | value | unit | ceiling | ratio | budget | holds |\n|---|--:|---|--:|--:|---|---|\n",
    );
    for r in rows {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} |\n",
            r.scenario,
            figure(r.value),
            r.unit,
            r.ceiling.map(figure).unwrap_or_default(),
            r.ratio.map(percent).unwrap_or_default(),
            r.budget,
            if r.holds { "yes" } else { "**no**" }
        ));
    }
    out
}

/// A figure as people read it: thousands apart, one decimal under a hundred.
pub fn figure(v: f64) -> String {
    if v.abs() >= 100.0 {
        let digits = format!("{:.0}", v.abs());
        let mut grouped = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i) % 3 == 0 {
                grouped.push(' ');
            }
            grouped.push(c);
        }
        if v < 0.0 {
            format!("-{grouped}")
        } else {
            grouped
        }
    } else {
        format!("{v:.1}")
    }
}
