//! Closed vocabularies written as enums: one table per enum gives its words, so the word a
//! variant is stored, sent and logged under is written once.

/// Gives an enum `ALL`, `as_str`, `parse` and `Display` from a table of its variants and
/// their words. The serde and sqlx mappings read the same table (`storage::words`).
macro_rules! words {
    ($ty:ident { $($variant:ident => $word:literal),+ $(,)? }) => {
        impl $ty {
            pub const ALL: [$ty; [$($word),+].len()] = [$($ty::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self {
                    $($ty::$variant => $word,)+
                }
            }

            pub fn parse(s: &str) -> Option<Self> {
                match s {
                    $($word => Some($ty::$variant),)+
                    _ => None,
                }
            }
        }

        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
                $ty::parse(&s).ok_or_else(|| {
                    serde::de::Error::unknown_variant(&s, &[$($word),+])
                })
            }
        }
    };
}

pub(crate) use words;
