//! The store's upkeep at the terminal: `rewind gc` and `rewind verify`.

use anyhow::{bail, Result};
use rewind::engine::api::GcParams;

use crate::app::args::Location;
use crate::app::project::project_and_store;

/// The store `at` names (its default for the project when none is given),
/// which must exist.
fn existing_store(at: &Location, what: &str) -> Result<rewind::store::Store> {
    let (_, store_dir) = project_and_store(at)?;
    if !store_dir.exists() {
        bail!("no store at {} ({what})", store_dir.display());
    }
    Ok(rewind::store::Store::open(&store_dir, true)?)
}

/// `rewind verify`: exit 1 when anything is wrong.
pub fn verify(at: Location) -> Result<()> {
    let store = existing_store(&at, "nothing to verify")?;
    let r = rewind::verify::run(&store)?;
    for p in &r.problems {
        println!("{:?}: {} ({})", p.kind, p.subject, p.detail);
    }
    println!(
        "{} session(s), {} stat cache(s), {} object(s) read and hashed: {}",
        r.sessions,
        r.stat_caches,
        r.objects,
        if r.ok {
            "no problems".to_string()
        } else {
            format!("{} problem(s)", r.problems.len())
        }
    );
    if !r.ok {
        bail!("the store has problems (listed above)");
    }
    Ok(())
}

pub fn gc(at: Location, grace: std::time::Duration, params: GcParams) -> Result<()> {
    let store = existing_store(&at, "nothing to collect")?;
    let opts = rewind::gc::GcOptions {
        grace,
        ..Default::default()
    };
    let r = rewind::gc::run(&store, &params, &opts)?;
    let verb = if r.dry_run { "would remove" } else { "removed" };
    for s in &r.pruned_sessions {
        println!("session {verb}: {s}");
    }
    println!(
        "{} {} of {} object(s), {} of {} byte(s); {} session(s) pruned{}",
        if r.dry_run { "Would free" } else { "Freed" },
        r.objects_removed,
        r.objects_before,
        r.bytes_freed,
        r.bytes_before,
        r.sessions_pruned,
        if r.budget_met {
            ""
        } else {
            "; the budget was NOT met"
        }
    );
    Ok(())
}

/// `rewind gc --remote`: the remote's sessions and packs (docs/remote.md).
pub fn gc_remote(
    at: Location,
    which: &str,
    params: rewind::remote::gc::RemoteGcParams,
    budget_bytes: Option<u64>,
) -> Result<()> {
    if budget_bytes.is_some() {
        bail!("--budget-bytes is for the local store; a remote keeps by --keep-last and --max-age-days");
    }
    let (_, store_dir) = project_and_store(&at)?;
    let layout = rewind::store::Layout::new(&store_dir);
    let remote = rewind::remote::Remote::open(&layout, Some(which))?;
    let r = rewind::remote::gc::run(&remote, &params)?;
    let verb = if r.dry_run { "would remove" } else { "removed" };
    for s in &r.sessions_removed {
        println!("session {verb}: {s}");
    }
    println!(
        "{}: {} of {} session(s) {verb}; of {} pack(s), {} marked unreferenced, {} deleted ({} bytes), {} referenced again; {} leftover(s) of cut-short pushes; {} request(s)",
        remote.spec.url,
        r.sessions_removed.len(),
        r.sessions,
        r.packs,
        r.marked,
        r.deleted,
        r.bytes_freed,
        r.unmarked,
        r.strays,
        r.requests
    );
    Ok(())
}
