//! The database goes away and comes back: two `sayso serve` processes on a PostgreSQL cluster
//! of the test's own, under a light steady load, while the cluster is stopped for 20 s.
//! Requests fail fast with 503 `unavailable`, `/readyz` follows the database, the service
//! recovers without a restart, parked awaits survive and are woken across replicas after the
//! listener re-subscribes, and nothing acknowledged is lost. Also, behind a fault-injecting TCP
//! proxy, a refused and then a hung PostgreSQL, and a SQLite file another process has locked.

#[path = "../common/mod.rs"]
mod common;

mod faults;
mod load;
mod pg_outage;
mod replica;
mod waiting_for_the_database;
