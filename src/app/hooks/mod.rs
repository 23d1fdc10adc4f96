//! `rewind hook`: the engine behind Claude Code's, Codex's and Gemini CLI's
//! hooks. Each hook event is one process with the event's JSON on stdin; it
//! finds the project's rewind session for the agent session, takes the
//! snapshot the event calls for, and exits. It never breaks the agent:
//! whatever fails is recorded in the store's failure log (`rewind status`
//! shows it), stdout stays empty and the exit status is 0 (an exit 2 from a
//! PreToolUse hook would block the tool). docs/agents.md says what is
//! recorded at which event.

pub mod agent;
mod cline_payload;
mod error;
pub mod event;
pub mod failures;
pub mod payload;
mod plugin_payload;
pub mod sessions;
pub mod tools;
mod work;

use std::path::PathBuf;
use std::time::Duration;

use crate::app::conversation::capture;
pub use error::HookError;
pub use event::{project_dir, Delivery};
pub use failures::{record_failure, record_unparsed};
pub use payload::Agent;
pub use payload::HookEvent;
use rewind::engine::api::SnapshotParams;
use rewind::engine::{default_store_dir, EngineConfig, ResumeMode, Warm};
use rewind::session::EntryId;
use rewind::store::Layout;
use sessions::{AgentSession, Sessions};
pub use work::needs_work;
use work::{work_of, Work};

/// What one event did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Recorded {
    /// The session written to, when the event needed one.
    pub session_file: Option<PathBuf>,
    /// The checkpoint appended, when something changed.
    pub entry_id: Option<EntryId>,
}

/// How long a hook waits for the session file's lock (a sidecar or a
/// terminal command holding it) before it gives up.
const SESSION_WAIT: Duration = Duration::from_secs(10);

/// Handle one event; the caller records a failure and exits 0 either way.
/// `warm` is the hook server's: the working copy and store kept from the
/// last event of this project, with the watcher armed (`None` for a hook
/// process of its own, which opens everything afresh and watches nothing).
pub fn handle(d: &Delivery<'_>, warm: Option<&mut Option<Warm>>) -> Result<Recorded, HookError> {
    let agent = d.agent;
    let event = d.event;
    let Some(work) = work_of(agent, event) else {
        return Ok(Recorded::default());
    };
    let project = d
        .project
        .clone()
        .unwrap_or_else(|| project_dir(agent, event));
    let root = project
        .canonicalize()
        .map_err(|source| HookError::Project {
            path: project.display().to_string(),
            source,
        })?;
    // Where the tool ran (a `cd` in a shell moves it): relative tool paths
    // are relative to it.
    let cwd = PathBuf::from(&event.cwd);
    let cwd = cwd.canonicalize().unwrap_or(cwd);
    let store = d.store.clone().unwrap_or_else(|| default_store_dir(&root));
    let layout = Layout::new(&store);
    // `rewind pause`: automatic checkpoints stand down, quietly (a hook
    // never troubles the agent).
    if crate::app::settings::paused(&layout).is_some() {
        return Ok(Recorded::default());
    }
    let sessions = Sessions::lock(&layout)?;
    let mut known = sessions.get(agent, &event.session_id)?;
    let mut claimed = false;
    if known.is_none() && agent == Agent::Gemini {
        if matches!(work, Work::Open) && event.source.as_deref() == Some("resume") {
            // A session Gemini CLI resumed or imported that rewind does not
            // know: whether it continues a conversation restore's fork, only
            // its first prompt's transcript says (SessionStart names a new
            // empty file). Nothing ran yet: the session is opened then.
            return Ok(Recorded::default());
        }
        if let Some(fork) = event
            .transcript_path
            .as_deref()
            .and_then(crate::app::conversation::imported_from)
            .and_then(|f| sessions::imported_fork(&layout.hook_forks_dir(), &f))
        {
            known = Some(fork.session(&event.session_id));
            claimed = true;
        }
    }
    if let (Some(id), Some(k)) = (&d.event_id, &known) {
        if k.last_event.as_deref() == Some(id.as_str()) {
            // Recorded already (by a server whose answer came too late).
            return Ok(Recorded {
                session_file: Some(k.session_file.clone()),
                entry_id: None,
            });
        }
    }
    let config = EngineConfig {
        cwd: Some(root.clone()),
        session_file: known.as_ref().map(|s| s.session_file.clone()),
        store_dir: Some(store),
        fsync: true,
        // One process per event: a watcher would see nothing. The server
        // keeps one armed from event to event.
        watch: warm.is_some(),
        // What changed since the last hook is the agent's work, recorded
        // by this event's snapshot under its own name, not as "outside".
        resume: ResumeMode::Continue,
        ..Default::default()
    };
    let mut none = None;
    let warm = warm.unwrap_or(&mut none);
    let mut engine = crate::app::project::open_waiting_warm(config, SESSION_WAIT, warm)?;
    let is_new = known.is_none() || claimed;
    let mut session = known.unwrap_or_else(|| AgentSession {
        agent: agent.name().to_string(),
        agent_session_id: event.session_id.clone(),
        session_file: engine.session_file().to_path_buf(),
        turn: 0,
        last_event: None,
        fork_parent: None,
    });
    let before = session.clone();
    // Only a prompt changes what this record says (its turn): it notes
    // its event so that, handed over again, it does not count the turn
    // twice. Every other event is made idempotent by its checkpoint's
    // request id, and rewriting this file for each (a file created and
    // renamed per tool call) would cost every event for nothing.
    if d.event_id.is_some() && matches!(work, Work::Prompt(_)) {
        session.last_event = d.event_id.clone();
    }
    // The first checkpoint of a conversation restore's fork goes where the
    // conversation was cut: a branch of the session.
    let fork_parent = session
        .fork_parent
        .clone()
        .map(EntryId::from_input)
        .filter(|id| engine.has_entry(id));
    if fork_parent.is_none() {
        session.fork_parent = None;
    }
    let moment = work.moment();
    let read_start = std::time::Instant::now();
    let conversation = moment.and_then(|m| {
        let prev = engine.last_conversation(agent.name(), &event.session_id);
        capture::capture(
            agent,
            &event.session_id,
            event.transcript_path.as_deref(),
            m,
            prev,
        )
    });
    // What reading the transcript's tail cost this event (the benches:
    // RUST_LOG=rewind::timing=debug); storing it is in the snapshot's part.
    tracing::debug!(
        target: "rewind::timing",
        conversation_us = read_start.elapsed().as_micros() as u64,
        appended = conversation.as_ref().map_or(0, |c| c.appended.len()),
        "conversation read"
    );
    let params = work.snapshot_params(&mut session.turn, &[&root, &project], &cwd);
    // The event's id goes with its checkpoint: an event handed over again
    // (its server killed after recording it, before noting so in the agent
    // session's record) returns that checkpoint instead of a second one.
    let snapshot = params
        .map(|p| {
            let p = match &fork_parent {
                Some(parent) => SnapshotParams {
                    parent_id: Some(parent.clone()),
                    // A scan scoped to a tool's paths compares with the last
                    // scan, not with the fork's parent.
                    paths: None,
                    ..p
                },
                None => p,
            };
            engine.snapshot_with_conversation(
                SnapshotParams {
                    request_id: d.event_id.clone(),
                    ..p
                },
                conversation,
            )
        })
        .transpose();
    // The session lets go of its lock; what is warm stays for the next
    // event of this project (also when this snapshot failed).
    *warm = Some(engine.into_warm());
    let entry_id = snapshot?.and_then(|r| r.entry_id);
    if entry_id.is_some() {
        session.fork_parent = None;
    }
    if is_new || session != before {
        // Which session and turn an agent session is at must survive a
        // power loss; the last event's id only keeps a late server answer
        // from being recorded twice, and is written without a sync.
        let durable = is_new
            || session.turn != before.turn
            || session.session_file != before.session_file
            || session.fork_parent != before.fork_parent;
        sessions.put(&session, agent, durable)?;
    }
    if let Some(own) = none.take() {
        // A hook process of its own exits next.
        own.close_for_exit();
    }
    Ok(Recorded {
        session_file: Some(session.session_file),
        entry_id,
    })
}

/// `rewind hook` without a server: handle the event on stdin; record any
/// failure; never fail.
pub fn run(d: &Delivery<'_>) {
    if let Err(err) = handle(d, None) {
        record_failure(d, &err);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An event delivered twice with one id (to a server that answered
    /// too late, then recorded by the hook itself) is recorded once.
    #[test]
    fn an_event_delivered_twice_is_recorded_once() {
        let project = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        // The default store is under REWIND_HOME; no other test of this
        // binary reads it.
        std::env::set_var("REWIND_HOME", home.path());
        let root = project.path().canonicalize().unwrap();
        std::fs::write(root.join("a.txt"), "1").unwrap();
        let payload = |event: &str, extra: &str| {
            format!(
                r#"{{"session_id":"s","cwd":"{}","hook_event_name":"{event}"{extra}}}"#,
                root.display()
            )
        };
        let start = payload("SessionStart", "");
        let prompt = payload("UserPromptSubmit", r#","prompt":"go""#);
        let with_id = |input: &str, id: &str| -> Result<Recorded, HookError> {
            let event = payload::parse(Agent::Codex, input.as_bytes()).unwrap();
            let d = Delivery {
                agent: Agent::Codex,
                event: &event,
                project: Some(root.clone()),
                event_id: Some(id.to_string()),
                store: None,
            };
            handle(&d, None)
        };
        with_id(&start, "e0").unwrap();
        assert!(with_id(&prompt, "e1").unwrap().entry_id.is_some());
        assert_eq!(
            with_id(&prompt, "e1").unwrap().entry_id,
            None,
            "the same event twice"
        );
        assert!(
            with_id(&prompt, "e2").unwrap().entry_id.is_some(),
            "another event with the same payload"
        );

        // A server killed after recording an event and before noting it in
        // the agent session's record: the event comes again (same id), and
        // the checkpoint recorded is its answer, not a second one.
        let records = default_store_dir(&root).join("hooks").join("sessions");
        let record = std::fs::read_dir(&records)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|x| x == "json"))
            .unwrap();
        let noted = std::fs::read(&record).unwrap();
        let first = with_id(&prompt, "e3").unwrap();
        std::fs::write(&record, &noted).unwrap();
        let again = with_id(&prompt, "e3").unwrap();
        assert!(first.entry_id.is_some());
        assert_eq!(again.entry_id, first.entry_id, "the checkpoint recorded");
        let session = std::fs::read_to_string(first.session_file.unwrap()).unwrap();
        assert_eq!(
            checkpoints_of_kind(&session, "message"),
            3,
            "e1, e2 and e3 once each"
        );
        // And the agent session's turn is the recorded one's: the next
        // prompt is turn 4.
        with_id(&prompt, "e4").unwrap();
        let session = std::fs::read_to_string(again.session_file.unwrap()).unwrap();
        assert!(session.contains(r#""turnIndex":4"#), "{session}");

        // A tool event handed over twice: one checkpoint, found again by
        // its id; and the agent session's record is not rewritten for it.
        let noted = std::fs::read(&record).unwrap();
        std::fs::write(root.join("a.txt"), "2").unwrap();
        let shell = payload(
            "PreToolUse",
            r#","tool_name":"shell","tool_input":{"command":"make"}"#,
        );
        let first = with_id(&shell, "e5").unwrap();
        assert!(first.entry_id.is_some());
        let again = with_id(&shell, "e5").unwrap();
        assert_eq!(again.entry_id, first.entry_id);
        assert_eq!(std::fs::read(&record).unwrap(), noted);
        let session = std::fs::read_to_string(first.session_file.unwrap()).unwrap();
        assert_eq!(checkpoints_of_kind(&session, "tool"), 1, "{session}");
    }

    /// How many lines of a session file record a checkpoint of `kind`.
    fn checkpoints_of_kind(session: &str, kind: &str) -> usize {
        let field = format!(r#""kind":"{kind}""#);
        session.lines().filter(|l| l.contains(&field)).count()
    }
}
