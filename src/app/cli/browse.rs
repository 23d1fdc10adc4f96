//! Reading history at the terminal: `rewind log`, `rewind diff` and
//! `rewind status`.

use anyhow::Result;
use std::collections::HashMap;

use rewind::engine::api::{
    CellDiff, CellStatus, CheckpointInfo, CheckpointKind, FileDiffParams, ListCheckpointsParams,
    NotebookDiff, PatchContent, PatchParams, Point, RangeParams, Scope,
};
use rewind::engine::Engine;
use rewind::printable::printable;
use rewind::session::EntryId;
use rewind::store::{Home, Layout};
use std::io::Write;

use crate::app::args::Location;
use crate::app::points;
use crate::app::project::{locate, project_and_store};

/// How deep `log --all` indents each checkpoint: one level more at each
/// real branch only, for the children that are not its main line (the one on
/// the path to the leaf, else the first); a linear session stays flat.
fn branch_depths<'a>(
    checkpoints: &'a [CheckpointInfo],
    above: &dyn Fn(&EntryId) -> Option<&'a CheckpointInfo>,
) -> HashMap<&'a EntryId, usize> {
    let mut children: HashMap<&EntryId, Vec<&CheckpointInfo>> = HashMap::new();
    for c in checkpoints {
        if let Some(p) = above(&c.entry_id) {
            children.entry(&p.entry_id).or_default().push(c);
        }
    }
    let main_child = |parent: &EntryId| -> Option<&EntryId> {
        let kids = children.get(parent)?;
        kids.iter()
            .find(|k| k.on_current_path)
            .or(kids.first())
            .map(|k| &k.entry_id)
    };
    let mut depth: HashMap<&EntryId, usize> = HashMap::new();
    // Parents are listed before their children (the log is appended in
    // order), so each parent's depth is known when its children come.
    for c in checkpoints {
        let d = match above(&c.entry_id) {
            Some(p) => {
                let base = depth.get(&p.entry_id).copied().unwrap_or(0);
                base + usize::from(main_child(&p.entry_id) != Some(&c.entry_id))
            }
            None => 0,
        };
        depth.insert(&c.entry_id, d);
    }
    depth
}

pub fn log(at: Location, all: bool) -> Result<()> {
    let engine = Engine::open_read_only(locate(&at)?)?;
    let list = engine.list_checkpoints(ListCheckpointsParams {
        scope: Some(if all { Scope::All } else { Scope::Path }),
        query: None,
    })?;
    let tree = engine.get_tree()?;
    println!("session {}", engine.session_file().display());
    // The checkpoint above each one (for the turn a step belongs to and
    // what a restore rolled back).
    let parents: HashMap<&EntryId, Option<&EntryId>> = tree
        .entries
        .iter()
        .map(|e| (&e.id, e.parent_id.as_ref()))
        .collect();
    let checkpoints: HashMap<&EntryId, &CheckpointInfo> =
        list.checkpoints.iter().map(|c| (&c.entry_id, c)).collect();
    let above = |id: &EntryId| -> Option<&CheckpointInfo> {
        let mut cur = parents.get(id).copied().flatten();
        while let Some(p) = cur {
            if let Some(c) = checkpoints.get(p) {
                return Some(c);
            }
            cur = parents.get(p).copied().flatten();
        }
        None
    };
    let rolled_back = rolled_back(&list.checkpoints, &above);
    let depth = branch_depths(&list.checkpoints, &above);
    // Tool checkpoints numbered within their turn (`restore --before-step`),
    // on each branch: by the turn's prompt above them.
    let mut steps: HashMap<(u64, Option<&EntryId>), usize> = Default::default();
    for c in &list.checkpoints {
        let indent = if all {
            "  ".repeat(depth.get(&c.entry_id).copied().unwrap_or(0))
        } else {
            String::new()
        };
        // `*` marks the checkpoints on the path to the leaf.
        let marker = if c.on_current_path { "*" } else { " " };
        // A label or note is someone else's text (an agent's prompt, a
        // host's): one line, control characters escaped.
        let label = c
            .label
            .as_ref()
            .map(|l| format!(" [{}]", rewind::printable::printable(l)))
            .unwrap_or_default();
        let note = c
            .note
            .as_ref()
            .map(|n| format!(" — {}", rewind::printable::printable(n)))
            .unwrap_or_default();
        let tool = match &c.tool {
            Some(t) if c.kind == CheckpointKind::Tool => {
                let mut start = above(&c.entry_id);
                while let Some(s) = start.filter(|s| s.kind == CheckpointKind::Tool) {
                    start = above(&s.entry_id);
                }
                let prompt = start
                    .filter(|s| s.kind == CheckpointKind::Message && s.turn_index == c.turn_index)
                    .map(|s| &s.entry_id);
                let step = steps.entry((c.turn_index, prompt)).or_insert(0);
                *step += 1;
                format!(" step {step}: {t}")
            }
            Some(t) => format!(" {t}"),
            None => String::new(),
        };
        // Paths present but not captured (docs/architecture.md rule 14).
        let uncaptured = if c.not_captured > 0 {
            format!(" ?{}", c.not_captured)
        } else {
            String::new()
        };
        let undone = rolled_back
            .get(&c.entry_id)
            .map(|by| format!("  (rolled back by {by})"))
            .unwrap_or_default();
        println!(
            "{indent}{marker} {} turn {:>3} {:<9} +{} ~{} -{}{uncaptured}  {}{tool}{label}{note}{undone}",
            c.entry_id, c.turn_index, c.kind, c.added, c.modified, c.deleted, c.timestamp
        );
    }
    Ok(())
}

/// The agent's checkpoints (a turn's prompt, tools and end) whose files a
/// later restore, navigation or undo on their branch put back as they were
/// before them, with that rollback: the checkpoints between the rollback
/// and the one above it whose tree it restored, and that one too when it is
/// a prompt (its turn is rolled back whole). A rollback that an undo later
/// took back rolls nothing back (`checkpoints` in file order).
fn rolled_back<'a>(
    checkpoints: &'a [CheckpointInfo],
    above: &dyn Fn(&EntryId) -> Option<&'a CheckpointInfo>,
) -> HashMap<EntryId, EntryId> {
    let mut by: HashMap<EntryId, EntryId> = HashMap::new();
    for r in checkpoints.iter().filter(|c| c.kind.is_rollback()) {
        let mut passed = Vec::new();
        let mut cur = above(&r.entry_id);
        while let Some(c) = cur {
            if c.tree_hash == r.tree_hash {
                break;
            }
            passed.push(c);
            cur = above(&c.entry_id);
        }
        match cur {
            // Not back at an earlier state of its branch (a restore of
            // some files, a tree from elsewhere): nothing to mark.
            None => continue,
            Some(c) if c.kind == CheckpointKind::Message => passed.push(c),
            Some(_) => {}
        }
        for c in passed {
            if c.kind.is_rollback() {
                // Undone: what it rolled back is back.
                by.retain(|_, rollback| rollback != &c.entry_id);
            } else if c.kind.is_turn() {
                by.insert(c.entry_id.clone(), r.entry_id.clone());
            }
        }
    }
    by
}

/// `rewind diff`: a patch `git apply` takes (engine/query/patch.rs); what
/// cannot be in it is said on stderr, so that stdout stays the patch. With
/// `cells`, notebooks are shown cell by cell instead (for reading).
pub fn diff(
    at: Location,
    from: Option<String>,
    to: Option<String>,
    name_only: bool,
    cells: bool,
) -> Result<()> {
    let mut engine = Engine::open_read_only(locate(&at)?)?;
    let RangeParams { from, to } = points::range_in(&engine, from, to)?;
    if name_only {
        let files = engine.get_modified_files(RangeParams { from, to })?;
        for f in &files.files {
            println!("{}\t{}", f.status.letter(), f.path);
        }
        return Ok(());
    }
    let patch = engine.get_patch(PatchParams {
        from: from.clone(),
        to: to.clone(),
        files: None,
        context_lines: None,
    })?;
    let mut out = std::io::stdout().lock();
    for f in &patch.files {
        let shown = printable(f.path.as_str());
        if cells {
            let notebook = engine.get_notebook_diff(FileDiffParams {
                file_path: f.path.clone(),
                from: from.clone(),
                to: to.clone(),
                context_lines: None,
            })?;
            if let Some(nb) = notebook {
                out.write_all(cells_text(&nb).as_bytes())?;
                continue;
            }
        }
        match f.content {
            PatchContent::Text => {}
            PatchContent::Binary => eprintln!(
                "rewind: {shown} is binary: `git apply` refuses the patch with it (`rewind restore --file` puts it back)"
            ),
            PatchContent::TooLarge => {
                eprintln!("rewind: {shown} is too large to diff: not in the patch");
                continue;
            }
            PatchContent::PermissionsOnly => {
                eprintln!(
                    "rewind: only {shown}'s permission bits changed, which git does not record: not in the patch"
                );
                continue;
            }
            PatchContent::NotCaptured => {
                eprintln!(
                    "rewind: {shown} was not captured at one end (its content is unknown): not in the patch"
                );
                continue;
            }
        }
        out.write_all(f.text().as_bytes())?;
        if f.approximate {
            eprintln!(
                "rewind: the diff of {shown} is not minimal (too large to diff in time): \
                 changed stretches are shown removed and re-added whole"
            );
        }
    }
    out.flush()?;
    Ok(())
}

/// A notebook's changed cells for reading: each cell's source diff and its
/// outputs in words (what the page shows too).
fn cells_text(nb: &NotebookDiff) -> String {
    let changed: Vec<&CellDiff> = nb
        .cells
        .iter()
        .filter(|c| c.status != CellStatus::Unchanged || c.outputs_changed)
        .collect();
    let language = nb
        .language
        .as_deref()
        .map(|l| format!(" ({l})"))
        .unwrap_or_default();
    let mut s = format!(
        "notebook {}{language}: {} of {} cell(s) changed\n",
        printable(nb.path.as_str()),
        changed.len(),
        nb.cells.len()
    );
    for c in changed {
        let place = match (c.old_index, c.new_index) {
            (Some(o), Some(n)) if o != n => format!("cell {n} (was {o})"),
            (_, Some(n)) => format!("cell {n}"),
            (Some(o), None) => format!("cell {o} of the older end"),
            (None, None) => "cell".to_string(),
        };
        let what = if c.status == CellStatus::Unchanged {
            "outputs changed"
        } else {
            c.status.as_str()
        };
        s.push_str(&format!("{place} [{}] {what}\n", c.cell_type));
        s.push_str(&c.source_diff);
        if let Some(outputs) = &c.outputs {
            let changed = if c.outputs_changed { " (changed)" } else { "" };
            s.push_str(&format!("  outputs: {outputs}{changed}\n"));
        }
    }
    s
}

/// Each remote of the store (and `REWIND_REMOTE`'s): how far it is behind
/// the store's sessions, by what the store knows (no request is made), and
/// the last background push failure.
fn print_remotes(layout: &Layout) {
    let mut specs = rewind::remote::config::list(layout).unwrap_or_else(|err| {
        println!("remote   config unreadable ({err})");
        Vec::new()
    });
    if let Ok(Some(spec)) = rewind::remote::config::auto_push(layout, None) {
        if !specs.iter().any(|s| s.name == spec.name) {
            specs.push(spec);
        }
    }
    for spec in specs {
        let behind = match rewind::remote::behind(layout, &spec) {
            Ok(b) if b.is_empty() => "up to date".to_string(),
            Ok(b) => format!(
                "behind: {} session(s), {} byte(s) of log not pushed",
                b.len(),
                b.iter().map(|x| x.bytes).sum::<u64>()
            ),
            Err(err) => format!("unknown ({err})"),
        };
        // A remote used by its URL is named by it: said once.
        if spec.name == spec.url {
            println!("remote   {}: {behind}", spec.url);
        } else {
            println!("remote   {} {}: {behind}", spec.name, spec.url);
        }
        if let Some((time, error)) = rewind::remote::last_error(layout, &spec) {
            println!(
                "         the last background push failed at {time}: {}",
                rewind::printable::printable(&error)
            );
        }
        if let Some(line) = rewind::remote::last_resent(layout, &spec) {
            println!("         {line}");
        }
    }
}

pub fn status(at: Location) -> Result<()> {
    let (root, store) = project_and_store(&at)?;
    let layout = Layout::new(&store);
    println!("project  {}", root.display());
    println!("store    {}", store.display());
    if let Some(p) = crate::app::settings::paused(&layout) {
        println!("paused   {} (`rewind resume` resumes them)", p.describe());
    }
    let agent_sessions = std::fs::read_dir(layout.hook_sessions_dir())
        .map(|d| {
            d.flatten()
                .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
                .count()
        })
        .unwrap_or(0);
    if agent_sessions > 0 {
        println!("agents   {agent_sessions} agent session(s) recorded through hooks");
    }
    let place = crate::app::hook_server::Place::new(root.clone(), store.clone());
    match crate::app::hook_server::client::status(&place) {
        Ok(Some(s)) => println!(
            "server   hook server pid {} ({} events served; `rewind server status`)",
            s.pid, s.events_served
        ),
        Ok(None) => {
            // None answers: say why, when one could not start or is not used.
            if let Some(why) = crate::app::hook_server::client::why_none(&place) {
                println!("server   {why}");
            }
        }
        Err(err) => println!("server   {err:#}"),
    }
    print_remotes(&layout);
    // A session that cannot be read is said, and the hook failures below
    // (which may say why) are shown all the same.
    match locate(&at) {
        Ok(config) => {
            if let Err(err) = print_session(config) {
                println!("session  unreadable ({err:#})");
            }
        }
        Err(err) => println!("session  none ({err:#})"),
    }
    let failures = crate::app::hooks::failures::recent(&layout, &Home::from_env(), &root, 10);
    if failures.is_empty() {
        println!("hooks    no failures recorded");
    } else {
        println!("hooks    {} recent failure(s):", failures.len());
        for f in failures {
            println!("  {} {} {}: {}", f.time, f.agent, f.event, f.error);
        }
    }
    Ok(())
}

/// The newest session's checkpoints and what changed since the latest.
fn print_session(config: rewind::engine::EngineConfig) -> Result<()> {
    let mut engine = Engine::open_read_only(config)?;
    let list = engine.list_checkpoints(ListCheckpointsParams {
        scope: Some(Scope::Path),
        query: None,
    })?;
    println!(
        "session  {} ({} checkpoints)",
        engine.session_file().display(),
        list.checkpoints.len()
    );
    if let Some(last) = list.checkpoints.last() {
        let label = last
            .label
            .as_ref()
            .map(|l| format!(" [{l}]"))
            .unwrap_or_default();
        println!(
            "latest   {} turn {} {} {}{label}",
            last.entry_id, last.turn_index, last.kind, last.timestamp
        );
        let changed = engine.get_modified_files(RangeParams {
            from: Some(Point::Entry(last.entry_id.clone())),
            to: Some(Point::Working),
        })?;
        if changed.files.is_empty() {
            println!("nothing changed since the latest checkpoint");
        } else {
            println!("changed since the latest checkpoint:");
            for f in &changed.files {
                println!("  {:?}\t{}", f.status, f.path);
            }
        }
        // What a restore to it could not bring back (rules 13, 14): said
        // even when nothing changed, which alone would read as "all safe".
        let left_out = engine.left_out(&last.entry_id)?;
        if !left_out.is_empty() {
            println!(
                "not protected: {} path(s) the latest checkpoint left out:",
                left_out.len()
            );
            const SHOWN: usize = 20;
            for line in crate::app::unprotected::lines(&left_out[..left_out.len().min(SHOWN)]) {
                println!("  {line}");
            }
            if left_out.len() > SHOWN {
                println!("  … and {} more", left_out.len() - SHOWN);
            }
        }
    }
    Ok(())
}
