//! What a standing allowance lets through and what ran on it, in the person's words: the
//! feed and the page of the approval that made it say it alike. Every text is made visible.

use time::OffsetDateTime;

use super::Zone;
use super::approval::agent_name;
use super::i18n::T;
use super::visible::{Lines, clip, visible};
use crate::domain::allowance::Scope;
use crate::domain::allowance::uses::AllowanceUse;

/// The most characters of a call's command, file or input in a list of uses.
const USE_CHARS: usize = 120;

/// The calls an allowance covers, in the reader's language.
pub struct Covers {
    t: T,
    /// "every Bash call no policy rule asks about".
    pub what: String,
    /// The policy rule, when one gated the calls.
    pub rule: Option<String>,
    /// "in the project folder /home/ana/shop".
    pub place: String,
    /// "in any Claude Code session".
    pub agent: String,
}

impl Covers {
    /// The whole of it in one sentence, the rule aside.
    pub fn sentence(&self) -> String {
        capitalised(&self.t.tr3(
            "allowance-sentence",
            "what",
            &self.what,
            "place",
            &self.place,
            "agent",
            &self.agent,
        ))
    }
}

/// `s` with its first letter a capital, to start a sentence.
pub fn capitalised(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// What `scope` covers.
pub fn covers(t: &T, scope: &Scope) -> Covers {
    let tool = clip(&scope.tool_name, 40, Lines::Marked).with_note();
    Covers {
        t: *t,
        what: match &scope.rule {
            None => t.tr1("allowance-every-call", "tool", tool),
            Some(_) => t.tr1("allowance-rule-calls", "tool", tool),
        },
        rule: scope.rule.as_deref().map(|r| visible(r, Lines::Marked)),
        place: match &scope.project {
            Some(p) => t.tr1("allowance-in-project", "project", visible(p, Lines::Marked)),
            None => t.tr("allowance-no-project"),
        },
        agent: t.tr1(
            "allowance-any-session",
            "agent",
            visible(agent_name(&scope.harness), Lines::Marked),
        ),
    }
}

/// "Bash allowed until 23:22 CET".
pub fn headline(
    t: &T,
    scope: &Scope,
    until: OffsetDateTime,
    zone: &Zone,
    now: OffsetDateTime,
) -> String {
    t.tr2(
        "allowance-headline",
        "tool",
        clip(&scope.tool_name, 40, Lines::Marked).with_note(),
        "clock",
        zone.clock(until, now),
    )
}

/// "3 calls ran without you", "1 call ran without you", "no call ran without you yet".
pub fn uses_words(t: &T, n: u64) -> String {
    match n {
        0 => t.tr("allowance-no-use"),
        n => t.tr1("allowance-uses", "count", n),
    }
}

/// One call that ran on an allowance, as a list shows it.
#[derive(Clone)]
pub struct UseLine {
    /// When it was recorded, in the reader's zone.
    pub at: String,
    pub at_iso: String,
    /// The command, the file, the URL or the input, on one line, cut with a note.
    pub what: String,
    pub session: Option<String>,
}

/// `u` as a list shows it.
pub fn use_line(u: &AllowanceUse, zone: &Zone, now: OffsetDateTime) -> UseLine {
    let input = serde_json::Value::Object(u.call.tool_input.clone());
    UseLine {
        at: zone.clock(u.at, now),
        at_iso: super::iso(u.at),
        what: super::what_runs::subject(&u.call.tool_name, &input, USE_CHARS).with_note(),
        session: u
            .call
            .session_id
            .as_deref()
            .map(|s| clip(s, 40, Lines::Marked).with_note()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_says_which_calls_where_and_from_which_agent() {
        let mut scope = Scope {
            harness: "claude".into(),
            project: Some("/home/ana/shop".into()),
            tool_name: "Bash".into(),
            rule: None,
        };
        assert_eq!(
            covers(&T::default(), &scope).sentence(),
            "Every Bash call no policy rule asks about, in the project folder /home/ana/shop, \
             in any Claude Code session."
        );
        scope.rule = Some("rule 2 (tool \"Bash\", command \"git status*\")".into());
        scope.project = None;
        let c = covers(&T::default(), &scope);
        assert!(
            c.sentence()
                .starts_with("Bash calls this policy rule asks about, outside")
        );
        assert!(c.rule.unwrap().contains("git status*"));
        let t = T::default();
        assert_eq!(uses_words(&t, 0), "no call ran without you yet");
        assert_eq!(uses_words(&t, 1), "1 call ran without you");
        assert_eq!(uses_words(&t, 3), "3 calls ran without you");
    }
}
