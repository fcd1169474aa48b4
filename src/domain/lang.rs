//! The languages a person's pages, mails, notifications and chat messages can be in, and
//! which of them a browser asks for (`Accept-Language`). The agent's own words and the API
//! are never translated: only what sayso itself says to a person.

use super::words::words;

/// A language sayso speaks to people in. English is the default and the fallback.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Lang {
    #[default]
    En,
    De,
}

words!(Lang {
    En => "en",
    De => "de",
});

impl Lang {
    /// The language a person asked for on the command line (`--lang de`), or why not,
    /// naming the languages there are. Case and a region (`de-AT`) are forgiven.
    pub fn chosen(raw: &str) -> Result<Lang, String> {
        primary(raw).and_then(Lang::parse).ok_or_else(|| {
            let all: Vec<&str> = Lang::ALL.iter().map(|l| l.as_str()).collect();
            format!(
                "{raw:?} is not a language sayso speaks; it speaks {}",
                all.join(", ")
            )
        })
    }

    /// The language an `Accept-Language` header prefers among those sayso speaks, q-values
    /// honoured (`de-AT` counts as `de`); `None` when it names none of them.
    pub fn from_accept_language(header: &str) -> Option<Lang> {
        let mut best: Option<(f32, usize, Lang)> = None;
        for (i, item) in header.split(',').enumerate().take(32) {
            let mut parts = item.split(';');
            let tag = parts.next().unwrap_or("").trim();
            let q = parts
                .filter_map(|p| p.trim().strip_prefix("q="))
                .find_map(|q| q.trim().parse::<f32>().ok())
                .unwrap_or(1.0);
            if !(q > 0.0 && q <= 1.0) {
                continue;
            }
            let Some(lang) = primary(tag).and_then(Lang::parse) else {
                continue;
            };
            // Higher q wins; between equal q, the one named first.
            if best.is_none_or(|(bq, bi, _)| q > bq || (q == bq && i < bi)) {
                best = Some((q, i, lang));
            }
        }
        best.map(|(_, _, lang)| lang)
    }
}

/// "de" of "de-AT" or "DE_at", lower-cased; `None` for an empty tag or `*`.
fn primary(tag: &str) -> Option<&'static str> {
    let first = tag.trim().split(['-', '_']).next().unwrap_or("");
    Lang::ALL
        .iter()
        .map(|l| l.as_str())
        .find(|l| first.eq_ignore_ascii_case(l))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_language_honours_q_values_and_regions() {
        assert_eq!(
            Lang::from_accept_language("de-AT,de;q=0.9,en;q=0.8"),
            Some(Lang::De)
        );
        assert_eq!(
            Lang::from_accept_language("en;q=0.5, de;q=0.8"),
            Some(Lang::De)
        );
        assert_eq!(
            Lang::from_accept_language("fr-FR, en-GB;q=0.7, de;q=0.6"),
            Some(Lang::En)
        );
        assert_eq!(Lang::from_accept_language("fr, it"), None);
        assert_eq!(
            Lang::from_accept_language("de;q=0, en;q=0.1"),
            Some(Lang::En)
        );
        assert_eq!(Lang::from_accept_language(""), None);
        assert_eq!(Lang::from_accept_language("*"), None);
        assert_eq!(Lang::from_accept_language("de;q=abc"), Some(Lang::De));
    }

    #[test]
    fn a_chosen_language_forgives_case_and_region_and_names_the_others() {
        assert_eq!(Lang::chosen("DE"), Ok(Lang::De));
        assert_eq!(Lang::chosen("de-AT"), Ok(Lang::De));
        let err = Lang::chosen("fr").unwrap_err();
        assert!(err.contains("\"fr\"") && err.contains("en, de"), "{err}");
    }
}
