//! What the person's pages and the notification mails both say: Markdown made safe, times in
//! words, a decision's state as a heading. One place, so a page and a mail about the same
//! decision never phrase it differently. Pure functions, no IO.
//!
//! Uses `domain` only (docs/ARCHITECTURE.md, checked by tests/layers.rs).

pub mod allowance;
pub mod approval;
pub mod edit_diff;
pub mod html;
pub mod i18n;
pub mod input_fields;
mod markdown;
pub mod project;
mod resolved;
mod status;
mod time;
pub mod visible;
pub mod what_runs;
mod zone;

pub use self::time::{iso, time_for, time_left};
pub use i18n::{Lang, T};
pub use markdown::{render_markdown, render_preview};
pub use resolved::resolved_message;
pub use status::heading;
pub use zone::Zone;
