//! How the domain's closed vocabularies are stored: as their words in TEXT columns, read
//! back through the same table (`domain::words`), so an unknown word in a row is an error
//! that names it rather than a default.

use sqlx::encode::IsNull;
use sqlx::error::BoxDynError;
use sqlx::{Database, Decode, Encode, Type};

use crate::domain::outbox::{Channel, MessageStatus, Purpose, Route};
use crate::domain::{EventKind, Kind, OutcomeSource, Status};

macro_rules! stored_as_text {
    ($($ty:ty),+ $(,)?) => {$(
        impl<DB: Database> Type<DB> for $ty
        where
            str: Type<DB>,
        {
            fn type_info() -> DB::TypeInfo {
                <str as Type<DB>>::type_info()
            }

            fn compatible(ty: &DB::TypeInfo) -> bool {
                <str as Type<DB>>::compatible(ty)
            }
        }

        impl<'q, DB: Database> Encode<'q, DB> for $ty
        where
            &'q str: Encode<'q, DB>,
        {
            fn encode_by_ref(
                &self,
                buf: &mut <DB as Database>::ArgumentBuffer,
            ) -> Result<IsNull, BoxDynError> {
                <&'q str as Encode<'q, DB>>::encode(self.as_str(), buf)
            }
        }

        impl<'r, DB: Database> Decode<'r, DB> for $ty
        where
            &'r str: Decode<'r, DB>,
        {
            fn decode(value: <DB as Database>::ValueRef<'r>) -> Result<Self, BoxDynError> {
                let word = <&'r str as Decode<'r, DB>>::decode(value)?;
                <$ty>::parse(word).ok_or_else(|| {
                    format!("unknown {} {word:?} in the database", stringify!($ty)).into()
                })
            }
        }
    )+};
}

stored_as_text!(
    Kind,
    Status,
    OutcomeSource,
    EventKind,
    Channel,
    Route,
    Purpose,
    MessageStatus
);

#[cfg(test)]
mod tests {
    use sqlx::{Connection, SqliteConnection};

    use super::*;

    #[tokio::test]
    async fn words_are_stored_and_read_back_and_unknown_ones_named() {
        let mut db = SqliteConnection::connect("sqlite::memory:").await.unwrap();
        let (route, status): (Route, MessageStatus) = sqlx::query_as("SELECT ?, ?")
            .bind(Route::FanOut)
            .bind(MessageStatus::Skipped)
            .fetch_one(&mut db)
            .await
            .unwrap();
        assert_eq!((route, status), (Route::FanOut, MessageStatus::Skipped));
        let err = sqlx::query_scalar::<_, Channel>("SELECT 'sms'")
            .fetch_one(&mut db)
            .await
            .unwrap_err();
        assert!(err.to_string().contains("unknown Channel \"sms\""), "{err}");
    }
}
