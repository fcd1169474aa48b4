//! The table the benchmark prints and the rows of `target/bench.json`.

/// One line of the table: a figure beside its ceiling and its budget.
#[derive(serde::Serialize)]
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
            r.ratio
                .map(|c| format!("{:.0} %", c * 100.0))
                .unwrap_or_default(),
            r.budget,
            if r.holds { "yes" } else { "NO" }
        );
    }
}
