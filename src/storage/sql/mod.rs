//! The store methods whose SQL is the same on SQLite and PostgreSQL, written once.
//!
//! Both databases read `$1`-style parameters, and the column kinds that differ between them
//! (`rows::columns`: `Id`, `At`, `Int`) encode and decode for either, so most of a store is
//! one text. It is compiled once per store by [`for_both_stores!`]: inside, `Backend` names
//! the store and `Db` its sqlx database, so every query is checked against a concrete type.
//! (A function generic over sqlx's `Database` would need a bound for every type it binds or
//! reads, longer than the queries themselves.) What differs between the two stores (grouped
//! creates and resolutions, the outbox's claims, PostgreSQL's arrays) stays in `sqlite/` and
//! `postgres/`.
//!
//! A store lends the shared text its pools and transactions through the same three methods:
//! `reads()`, `writes()` and `begin_write()`.

/// Implements the items it is given once for the SQLite store and once for the PostgreSQL
/// store, with `Backend` naming the store and `Db` its sqlx database.
macro_rules! for_both_stores {
    ($($item:item)*) => {
        const _: () = {
            #[allow(unused_imports)]
            use sqlx::sqlite::Sqlite as Db;
            use crate::storage::SqliteStore as Backend;
            $($item)*
        };
        const _: () = {
            #[allow(unused_imports)]
            use sqlx::postgres::Postgres as Db;
            use crate::storage::PgStore as Backend;
            $($item)*
        };
    };
}

mod allowance_uses;
mod allowances;
mod channels;
mod chat;
mod events;
mod gauges;
mod inboxes;
mod passkeys;
mod people;
mod receipts;
mod usage;
