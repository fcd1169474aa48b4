//! The column kinds the two databases store differently, each decoded (and encoded) in one
//! place so a row type serves both: an id is hyphenated TEXT in SQLite and `uuid` in
//! PostgreSQL, a time integer milliseconds in SQLite and `timestamptz` in PostgreSQL, a
//! count INTEGER (64 bits) in SQLite and `integer` or `bigint` in PostgreSQL.

use sqlx::encode::IsNull;
use sqlx::error::BoxDynError;
use sqlx::postgres::{PgArgumentBuffer, PgTypeInfo, PgValueRef, Postgres};
use sqlx::sqlite::{Sqlite, SqliteArgumentsBuffer, SqliteTypeInfo, SqliteValueRef};
use sqlx::{Decode, Encode, Type, TypeInfo, ValueRef};
use time::OffsetDateTime;
use uuid::Uuid;
use uuid::fmt::Hyphenated;

use super::{from_millis, millis, to_ms_precision};

/// An id column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(in crate::storage) struct Id(pub Uuid);

/// A time column, read to the millisecond (PostgreSQL keeps microseconds).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(in crate::storage) struct At(pub OffsetDateTime);

/// A count or other integer column, read as 64 bits from either width.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(in crate::storage) struct Int(pub i64);

impl From<Id> for Uuid {
    fn from(id: Id) -> Uuid {
        id.0
    }
}

impl From<At> for OffsetDateTime {
    fn from(at: At) -> OffsetDateTime {
        at.0
    }
}

impl Type<Sqlite> for Id {
    fn type_info() -> SqliteTypeInfo {
        <Hyphenated as Type<Sqlite>>::type_info()
    }

    fn compatible(ty: &SqliteTypeInfo) -> bool {
        <str as Type<Sqlite>>::compatible(ty)
    }
}

impl<'r> Decode<'r, Sqlite> for Id {
    fn decode(value: SqliteValueRef<'r>) -> Result<Self, BoxDynError> {
        <Hyphenated as Decode<Sqlite>>::decode(value).map(|h| Id(h.into_uuid()))
    }
}

impl Encode<'_, Sqlite> for Id {
    fn encode_by_ref(&self, buf: &mut SqliteArgumentsBuffer) -> Result<IsNull, BoxDynError> {
        <Hyphenated as Encode<Sqlite>>::encode(self.0.hyphenated(), buf)
    }
}

impl Type<Postgres> for Id {
    fn type_info() -> PgTypeInfo {
        <Uuid as Type<Postgres>>::type_info()
    }
}

impl<'r> Decode<'r, Postgres> for Id {
    fn decode(value: PgValueRef<'r>) -> Result<Self, BoxDynError> {
        <Uuid as Decode<Postgres>>::decode(value).map(Id)
    }
}

impl Encode<'_, Postgres> for Id {
    fn encode_by_ref(&self, buf: &mut PgArgumentBuffer) -> Result<IsNull, BoxDynError> {
        <Uuid as Encode<Postgres>>::encode_by_ref(&self.0, buf)
    }
}

impl Type<Sqlite> for At {
    fn type_info() -> SqliteTypeInfo {
        <i64 as Type<Sqlite>>::type_info()
    }

    fn compatible(ty: &SqliteTypeInfo) -> bool {
        <i64 as Type<Sqlite>>::compatible(ty)
    }
}

impl<'r> Decode<'r, Sqlite> for At {
    fn decode(value: SqliteValueRef<'r>) -> Result<Self, BoxDynError> {
        <i64 as Decode<Sqlite>>::decode(value).map(|ms| At(from_millis(ms)))
    }
}

impl Encode<'_, Sqlite> for At {
    fn encode_by_ref(&self, buf: &mut SqliteArgumentsBuffer) -> Result<IsNull, BoxDynError> {
        <i64 as Encode<Sqlite>>::encode(millis(self.0), buf)
    }
}

impl Type<Postgres> for At {
    fn type_info() -> PgTypeInfo {
        <OffsetDateTime as Type<Postgres>>::type_info()
    }
}

impl<'r> Decode<'r, Postgres> for At {
    fn decode(value: PgValueRef<'r>) -> Result<Self, BoxDynError> {
        <OffsetDateTime as Decode<Postgres>>::decode(value).map(|t| At(to_ms_precision(t)))
    }
}

impl Encode<'_, Postgres> for At {
    fn encode_by_ref(&self, buf: &mut PgArgumentBuffer) -> Result<IsNull, BoxDynError> {
        <OffsetDateTime as Encode<Postgres>>::encode_by_ref(&self.0, buf)
    }
}

impl Type<Sqlite> for Int {
    fn type_info() -> SqliteTypeInfo {
        <i64 as Type<Sqlite>>::type_info()
    }

    fn compatible(ty: &SqliteTypeInfo) -> bool {
        <i64 as Type<Sqlite>>::compatible(ty)
    }
}

impl<'r> Decode<'r, Sqlite> for Int {
    fn decode(value: SqliteValueRef<'r>) -> Result<Self, BoxDynError> {
        <i64 as Decode<Sqlite>>::decode(value).map(Int)
    }
}

impl Type<Postgres> for Int {
    fn type_info() -> PgTypeInfo {
        <i64 as Type<Postgres>>::type_info()
    }

    fn compatible(ty: &PgTypeInfo) -> bool {
        <i64 as Type<Postgres>>::compatible(ty) || <i32 as Type<Postgres>>::compatible(ty)
    }
}

impl<'r> Decode<'r, Postgres> for Int {
    fn decode(value: PgValueRef<'r>) -> Result<Self, BoxDynError> {
        if value.type_info().name() == "INT4" {
            <i32 as Decode<Postgres>>::decode(value).map(|n| Int(i64::from(n)))
        } else {
            <i64 as Decode<Postgres>>::decode(value).map(Int)
        }
    }
}
