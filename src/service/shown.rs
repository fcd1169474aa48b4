//! The API's view of a decision, as JSON, kept with the row it was made from.
//!
//! An agent that polls asks for the same decision again and again, and it rarely changed in
//! between. Each `GET` still reads the row, through its key (a revoked key stops at once), but
//! when the row is byte for byte the one a view was made from, that view is the answer: the
//! row is not decoded, its spec not parsed, the view not built nor written again. Under a
//! profile that was more than a third of a `GET`'s instructions.
//!
//! The view is a function of the row alone: the answer link comes from the decision's id and
//! the server's key, the answer text from the row. Time enters in one place, a pending
//! decision whose expiry has passed, which a `GET` settles; such an entry is never used.

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use time::OffsetDateTime;
use uuid::Uuid;

/// Entries kept: one place each, chosen by the decision's id. An id shares its place with
/// others, so many agents polling at once may push each other out: each then reads its row
/// in full, as without the memo.
const PLACES: usize = 4096;

/// The largest row and view kept together. A larger one is read in full each time: it keeps
/// the memo's memory under `PLACES` times this (32 MB), and its usual size near 2 KB a place.
const MAX_ENTRY_BYTES: usize = 8 * 1024;

/// A decision's view as a `GET` last showed it.
#[derive(Debug)]
pub(super) struct Shown {
    pub id: Uuid,
    /// The row's bytes, as the store gave them (`KeyedRead::Read`).
    pub row: Box<[u8]>,
    /// The view, written as JSON.
    pub json: Bytes,
    /// While the decision is pending, when it expires: from then on this view is out of date.
    pub pending_until: Option<OffsetDateTime>,
}

impl Shown {
    /// Whether this view still holds at `now`, if its row is unchanged.
    pub fn holds_at(&self, now: OffsetDateTime) -> bool {
        self.pending_until.is_none_or(|until| now < until)
    }
}

/// The views last shown, one a place.
pub(super) struct ShownViews {
    places: Box<[Mutex<Option<Arc<Shown>>>]>,
}

impl ShownViews {
    pub fn new() -> Self {
        ShownViews {
            places: (0..PLACES).map(|_| Mutex::new(None)).collect(),
        }
    }

    fn place(&self, id: Uuid) -> &Mutex<Option<Arc<Shown>>> {
        // The low bits of an id (UUIDv7) are random.
        &self.places[(id.as_u128() % PLACES as u128) as usize]
    }

    /// The view kept for `id`, if any.
    pub fn get(&self, id: Uuid) -> Option<Arc<Shown>> {
        let kept = self.place(id).lock().unwrap_or_else(|e| e.into_inner());
        kept.as_ref().filter(|s| s.id == id).cloned()
    }

    /// Keeps `shown` in its place, in place of whatever was there; unless it is too large.
    pub fn put(&self, shown: Shown) {
        if shown.row.len() + shown.json.len() > MAX_ENTRY_BYTES {
            return;
        }
        let place = self.place(shown.id);
        *place.lock().unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(shown));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(id: Uuid, row: &[u8], pending_until: Option<OffsetDateTime>) -> Shown {
        Shown {
            id,
            row: row.into(),
            json: Bytes::from_static(b"{}"),
            pending_until,
        }
    }

    #[test]
    fn a_place_holds_only_the_decision_put_there() {
        let views = ShownViews::new();
        let a = Uuid::now_v7();
        // Same place (same low bits), another decision.
        let b = Uuid::from_u128(a.as_u128() ^ (1u128 << 100));
        views.put(shown(a, b"row a", None));
        assert_eq!(&*views.get(a).expect("kept").row, b"row a");
        assert!(views.get(b).is_none(), "another id in the same place");
        views.put(shown(b, b"row b", None));
        assert!(views.get(a).is_none(), "pushed out");
        assert_eq!(&*views.get(b).expect("kept").row, b"row b");
    }

    #[test]
    fn a_large_view_is_not_kept() {
        let views = ShownViews::new();
        let id = Uuid::now_v7();
        views.put(shown(id, &vec![b'x'; MAX_ENTRY_BYTES], None));
        assert!(views.get(id).is_none());
    }

    #[test]
    fn a_pending_view_holds_until_its_expiry() {
        let until = OffsetDateTime::now_utc();
        let view = shown(Uuid::now_v7(), b"row", Some(until));
        assert!(view.holds_at(until - time::Duration::milliseconds(1)));
        assert!(!view.holds_at(until));
        assert!(shown(Uuid::now_v7(), b"row", None).holds_at(until));
    }
}
