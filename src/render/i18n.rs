//! What sayso says to a person, in their language: every text of the pages, mails,
//! notifications and chat messages is a Fluent message in `locales/<lang>/*.ftl`, built into
//! the binary. A `T` is one language's lookups; pages and mails hand it to their templates as
//! `t`, and Rust code asks it the same way: `t.tr("feed-empty")`, `t.tr1("feed-waiting",
//! "count", n)`. Plurals and numbers are Fluent's (its CLDR plural rules per language).
//!
//! `tests/i18n.rs` checks that every id asked for in `src/` and `templates/` is in every
//! language, and that no language has one the others lack.

use std::borrow::Cow;
use std::collections::HashMap;

use fluent_templates::fluent_bundle::FluentValue;
use fluent_templates::{LanguageIdentifier, Loader, langid};

pub use crate::domain::lang::Lang;

fluent_templates::static_loader! {
    static LOCALES = {
        locales: "./locales",
        fallback_language: "en",
        // No bidi isolation marks around arguments: the texts go into HTML, mail and chat
        // messages, where the invisible U+2068/U+2069 would only get in the way (a page
        // marks an agent's words `dir="auto"` itself where it matters).
        customise: |bundle| bundle.set_use_isolating(false),
    };
}

/// One language's texts. Cheap to copy; every page and message holds one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct T {
    lang: Lang,
}

impl T {
    pub fn new(lang: Lang) -> T {
        T { lang }
    }

    /// The language, as `<html lang>` names it.
    pub fn lang(&self) -> Lang {
        self.lang
    }

    /// The message `id`.
    pub fn tr(&self, id: &str) -> String {
        self.lookup(id, None)
    }

    /// The message `id` with one argument.
    pub fn tr1(&self, id: &str, k: &'static str, v: impl Arg) -> String {
        self.with(id, [(k, v.value())])
    }

    /// The message `id` with two arguments.
    pub fn tr2(
        &self,
        id: &str,
        k1: &'static str,
        v1: impl Arg,
        k2: &'static str,
        v2: impl Arg,
    ) -> String {
        self.with(id, [(k1, v1.value()), (k2, v2.value())])
    }

    /// The message `id` with three arguments.
    #[allow(clippy::too_many_arguments)]
    pub fn tr3(
        &self,
        id: &str,
        k1: &'static str,
        v1: impl Arg,
        k2: &'static str,
        v2: impl Arg,
        k3: &'static str,
        v3: impl Arg,
    ) -> String {
        self.with(id, [(k1, v1.value()), (k2, v2.value()), (k3, v3.value())])
    }

    /// The message `id` with its named arguments.
    fn with<const N: usize>(
        &self,
        id: &str,
        args: [(&'static str, FluentValue<'static>); N],
    ) -> String {
        let args = args
            .into_iter()
            .map(|(k, v)| (Cow::Borrowed(k), v))
            .collect();
        self.lookup(id, Some(args))
    }

    /// Whether a page carries its scripts' words: in English the scripts say their own.
    pub fn scripts_speak(&self) -> bool {
        self.lang != Lang::En
    }

    /// What the pages' scripts say (feed.js, passkey.js), as a JSON object a page carries
    /// in the `data-words` attribute of `#words` (escaped as any attribute is; no inline
    /// script, so the Content-Security-Policy and the pages' own checks hold).
    pub fn script_words(&self) -> String {
        let words: serde_json::Map<String, serde_json::Value> = SCRIPT_WORDS
            .iter()
            .map(|id| {
                // The id without its area: `js-push-on` is `push-on`.
                let key = id.split_once('-').map_or(*id, |(_, key)| key);
                (key.to_string(), serde_json::Value::String(self.tr(id)))
            })
            .collect();
        serde_json::Value::Object(words).to_string()
    }

    fn lookup(&self, id: &str, args: Option<HashMap<Cow<'static, str>, FluentValue>>) -> String {
        LOCALES.lookup_complete(self.langid(), id, args.as_ref())
    }

    fn langid(&self) -> &'static LanguageIdentifier {
        static EN: LanguageIdentifier = langid!("en");
        static DE: LanguageIdentifier = langid!("de");
        match self.lang {
            Lang::En => &EN,
            Lang::De => &DE,
        }
    }
}

/// The messages the pages' scripts say, each under its id without the area `js`.
const SCRIPT_WORDS: &[&str] = &[
    "js-push-asking",
    "js-push-not-allowed",
    "js-push-subscribing",
    "js-push-will-be-notified",
    "js-push-failed",
    "js-push-blocked",
    "js-push-on",
    "js-passkey-not-used",
    "js-passkey-screen-lock",
    "js-passkey-added",
    "js-passkey-getting-ready",
    "js-passkey-first-existing",
    "js-passkey-make-new",
    "js-passkey-agreed",
    "js-passkey-none-added",
    "js-passkey-unsupported",
    "js-passkey-use-to-allow",
    "js-passkey-sending",
    "js-passkey-not-allowed",
];

/// A value a message is given: text or a number (which selects a plural form).
pub trait Arg {
    fn value(&self) -> FluentValue<'static>;
}

impl Arg for str {
    fn value(&self) -> FluentValue<'static> {
        FluentValue::from(self.to_string())
    }
}

impl Arg for String {
    fn value(&self) -> FluentValue<'static> {
        FluentValue::from(self.clone())
    }
}

impl<A: Arg + ?Sized> Arg for &A {
    fn value(&self) -> FluentValue<'static> {
        (**self).value()
    }
}

macro_rules! number_arg {
    ($($ty:ty),*) => {$(
        impl Arg for $ty {
            fn value(&self) -> FluentValue<'static> {
                FluentValue::from(*self)
            }
        }
    )*};
}
number_arg!(u8, u16, u32, u64, usize, i32, i64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plurals_follow_each_language() {
        let en = T::new(Lang::En);
        let de = T::new(Lang::De);
        assert_eq!(en.tr1("time-in-minutes", "n", 1), "in 1 min");
        assert_eq!(de.tr1("time-in-minutes", "n", 1), "in 1 Minute");
        assert_eq!(de.tr1("time-in-minutes", "n", 5), "in 5 Minuten");
        assert_eq!(de.tr1("time-for-minutes", "n", 5), "noch 5 Minuten");
    }

    #[test]
    fn the_scripts_words_are_json_and_only_carried_when_not_english() {
        let words: serde_json::Value =
            serde_json::from_str(&T::new(Lang::De).script_words()).unwrap();
        assert_eq!(words["passkey-sending"], "Wird gesendet…");
        assert!(!T::default().scripts_speak() && T::new(Lang::De).scripts_speak());
    }
}
