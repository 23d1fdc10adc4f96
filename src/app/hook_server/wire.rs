//! The lines a hook and its server exchange on the socket: one JSON request
//! line, then the server's answer lines. An event is acknowledged at once
//! (`ack`), so a hook tells a busy server from a hung one, then answered
//! when it is recorded.

use serde::{Deserialize, Serialize};

use crate::app::hooks::{Agent, HookEvent};

/// What a client asks.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "camelCase")]
pub enum Request {
    /// Record one hook event.
    #[serde(rename_all = "camelCase")]
    Event {
        build: String,
        agent: Agent,
        /// The project as the hook found it (its environment names it).
        project: String,
        event_id: String,
        /// The payload as the hook parsed it: the server does not parse it
        /// again.
        event: Box<HookEvent>,
    },
    /// What the server runs and has done.
    #[serde(rename_all = "camelCase")]
    Status { build: String },
    /// Exit once the event at hand is recorded.
    Stop,
}

/// What every request line says whatever its build: a server reads this
/// first, so that another build's event (whose other fields may have
/// another shape) is answered "other build", not "malformed".
#[derive(Debug, Deserialize)]
pub struct Envelope {
    pub op: String,
    #[serde(default)]
    pub build: Option<String>,
}

/// One answer line.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Reply {
    /// The event was received and will be recorded.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ack: bool,
    /// The request was carried out (for an event: recorded, or its failure
    /// logged as a hook's would be).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub done: bool,
    /// The server is another build of rewind: the client must not use it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_build: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<Status>,
}

impl Reply {
    /// The request was carried out.
    pub fn done() -> Reply {
        Reply {
            done: true,
            ..Reply::default()
        }
    }

    /// An event received, to be recorded.
    pub fn ack() -> Reply {
        Reply {
            ack: true,
            ..Reply::default()
        }
    }

    /// A request refused (not carried out), with why.
    pub fn refused(error: String) -> Reply {
        Reply {
            error: Some(error),
            ..Reply::default()
        }
    }
}

/// `rewind server status`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    pub pid: u32,
    pub version: String,
    pub build: String,
    pub project: String,
    pub store: String,
    pub uptime_secs: u64,
    pub idle_exit_secs: u64,
    pub events_served: u64,
    /// Events whose recording failed (logged as a hook's failure is).
    pub events_failed: u64,
    /// The rewind sessions recorded into.
    pub sessions: Vec<String>,
    /// Directories the watcher watches (`None`: no watcher yet, or given up).
    pub watched_dirs: Option<usize>,
    /// The system's watch limit was reached: every scan is a full one.
    pub watch_limit_reached: bool,
    pub scans: u64,
    /// Full scans, by why (`first scan`, `watcher lost track`, …).
    pub full_scans: Vec<(String, u64)>,
}
