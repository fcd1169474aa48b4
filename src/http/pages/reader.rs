//! Who reads a page, as far as the page can tell: the zone its times are shown in, and
//! whether it links back to a feed. Only a browser bound to a person (its device cookie) is
//! given the way back, and only as `/inbox`, the bound device's own address: a feed link is a
//! bearer capability and never goes into a page. A decision link opened on a browser bound to
//! nobody has no feed to go back to, and the page invents none.

use axum::http::HeaderMap;
use uuid::Uuid;

use super::device_cookie;
use crate::domain::people::Person;
use crate::render::{Lang, T, Zone};
use crate::service::Service;

/// Who a page is shown to.
#[derive(Debug, Clone, Default)]
pub struct Reader {
    /// The zone every time on the page is shown in (and named by).
    pub zone: Zone,
    /// The browser is bound to a person: the page links back to `/inbox`.
    pub to_feed: bool,
    /// The language of the page: the person's, else the browser's, else English.
    pub t: T,
}

impl Reader {
    /// The reader of a page of a decision of `inbox_id`, opened by this request; `person` is
    /// the one a person link names, if the page was opened through one.
    pub async fn of(
        svc: &Service,
        headers: &HeaderMap,
        person: Option<&Person>,
        inbox_id: Uuid,
    ) -> Reader {
        let cookie = device_cookie(headers);
        let r = svc.page_reader(cookie.as_deref(), person, inbox_id).await;
        let lang = person.and_then(|p| p.lang);
        Reader {
            zone: Zone::of(r.zone.as_deref()),
            to_feed: r.bound.is_some(),
            t: page_t(headers, lang.or(r.bound.and_then(|p| p.lang))),
        }
    }

    /// The reader of a page that opened no decision (a wrong link, an error): the way back
    /// when the browser is bound, times in UTC.
    pub async fn bound(svc: &Service, headers: &HeaderMap) -> Reader {
        let cookie = device_cookie(headers);
        let bound = match cookie.as_deref() {
            Some(c) => svc.bound_person(Some(c)).await,
            None => None,
        };
        Reader {
            zone: Zone::of(bound.as_ref().and_then(|(_, p)| p.tz.as_deref())),
            to_feed: bound.is_some(),
            t: page_t(headers, bound.and_then(|(_, p)| p.lang)),
        }
    }
}

/// A page's language: the person's, when the page knows them; else the one the browser's
/// `Accept-Language` prefers among those there are; else English.
pub fn page_t(headers: &HeaderMap, person: Option<Lang>) -> T {
    let browser = || {
        headers
            .get_all(axum::http::header::ACCEPT_LANGUAGE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .find_map(Lang::from_accept_language)
    };
    T::new(person.or_else(browser).unwrap_or_default())
}
