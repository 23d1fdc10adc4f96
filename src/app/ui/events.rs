//! Live updates: a Server-Sent Events stream that says `change` whenever
//! the session file the page shows (or, without one chosen, the newest
//! session) changes, so checkpoints an agent records appear without a
//! reload. The file is polled (size, modification time) twice a second:
//! sessions are append-only logs, so that sees every append, and it needs
//! no watcher beside the sidecar's.

use std::convert::Infallible;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::stream::{self, Stream};
use serde_json::json;

use super::Ui;

const POLL: Duration = Duration::from_millis(500);

type Stamp = Option<(PathBuf, u64, Option<SystemTime>)>;

fn stamp(ui: &Ui, session: Option<&str>) -> Stamp {
    let at = ui.location(session).ok()?;
    let path = crate::app::project::session_of(&at).ok()?;
    let meta = std::fs::metadata(&path).ok()?;
    Some((path, meta.len(), meta.modified().ok()))
}

pub fn stream(
    ui: Arc<Ui>,
    session: Option<String>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let first = stamp(&ui, session.as_deref());
    let events = stream::unfold((ui, session, first), |(ui, session, last)| async move {
        loop {
            tokio::time::sleep(POLL).await;
            let now = stamp(&ui, session.as_deref());
            if now != last {
                let name = now
                    .as_ref()
                    .and_then(|(p, _, _)| p.file_name())
                    .map(|n| n.to_string_lossy().into_owned());
                let bytes = now.as_ref().map(|(_, b, _)| *b);
                let event = Event::default()
                    .event("change")
                    .data(json!({ "session": name, "bytes": bytes }).to_string());
                return Some((Ok(event), (ui, session, now)));
            }
        }
    });
    Sse::new(events).keep_alive(KeepAlive::default())
}
