//! A project's checkpoint settings, in its store's `config.toml` beside the
//! remotes (docs/agents.md "Pausing"):
//!
//! ```toml
//! [checkpoints]
//! paused = true                       # automatic checkpoints stand down
//! paused_since = "2026-11-28T06:00:00Z"
//! max_manual_per_session = 50         # `rewind checkpoint`'s cap
//! ```
//!
//! `rewind pause` and `rewind resume` write `paused`; someone who wants
//! automatic checkpoints off by default writes it by hand. Every front end
//! asks here, once: the hooks (and through them the hook server), `rewind
//! watch`, `rewind mcp`'s resume, and the cap of a person's checkpoints.
//! A person's explicit act (a checkpoint, a label, a restore) is never
//! paused.

use std::io::{self, Write};

use anyhow::{Context, Result};
use rewind::durability::atomic_write;
use rewind::store::Layout;
use toml_edit::{value, DocumentMut, Item, Table};

const TABLE: &str = "checkpoints";
const PAUSED: &str = "paused";
const PAUSED_SINCE: &str = "paused_since";
const MAX_MANUAL: &str = "max_manual_per_session";

/// Automatic checkpoints are paused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Paused {
    /// When `rewind pause` paused them; `None` when the setting was
    /// written by hand.
    pub since: Option<String>,
}

impl Paused {
    /// "paused since …", for `rewind status` and the page.
    pub fn describe(&self) -> String {
        match &self.since {
            Some(t) => format!(
                "automatic checkpoints paused since {}",
                rewind::printable::printable(t)
            ),
            None => "automatic checkpoints paused (config.toml: [checkpoints] paused = true)"
                .to_string(),
        }
    }
}

/// The store's `config.toml`, or an empty one when there is none.
fn read(layout: &Layout) -> Result<DocumentMut> {
    let path = layout.config_file();
    match std::fs::read_to_string(&path) {
        Ok(text) => text
            .parse::<DocumentMut>()
            .with_context(|| format!("reading {}", path.display())),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(DocumentMut::new()),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

fn write(layout: &Layout, doc: &DocumentMut) -> Result<()> {
    let path = layout.config_file();
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let temp = path.with_extension(format!("toml.tmp-{}", std::process::id()));
    atomic_write(&path, &temp, true, |f| {
        f.write_all(doc.to_string().as_bytes())
    })
    .with_context(|| format!("writing {}", path.display()))
}

/// Whether automatic checkpoints are paused for this store. A config that
/// does not read pauses nothing (a hook must go on recording; `rewind
/// status` says what is wrong with the file).
pub fn paused(layout: &Layout) -> Option<Paused> {
    let doc = read(layout).ok()?;
    let table = doc.get(TABLE)?;
    if !table.get(PAUSED)?.as_bool()? {
        return None;
    }
    Some(Paused {
        since: table
            .get(PAUSED_SINCE)
            .and_then(Item::as_str)
            .map(str::to_string),
    })
}

/// The most manual checkpoints a session keeps (`None`: the engine's
/// default).
pub fn max_manual(layout: &Layout) -> Result<Option<u64>> {
    let doc = read(layout)?;
    let Some(item) = doc.get(TABLE).and_then(|t| t.get(MAX_MANUAL)) else {
        return Ok(None);
    };
    match item.as_integer() {
        Some(n) if n >= 0 => Ok(Some(n as u64)),
        _ => anyhow::bail!(
            "{}: [checkpoints] {MAX_MANUAL} must be a whole number (0 or more)",
            layout.config_file().display()
        ),
    }
}

fn table(doc: &mut DocumentMut) -> Result<&mut Table> {
    if !doc.contains_key(TABLE) {
        doc.insert(TABLE, Item::Table(Table::new()));
    }
    doc[TABLE]
        .as_table_mut()
        .context("config.toml: `checkpoints` is not a table")
}

/// Pause automatic checkpoints; the pause as it stands (an earlier pause's
/// time is kept).
pub fn pause(layout: &Layout) -> Result<Paused> {
    if let Some(p) = paused(layout) {
        return Ok(p);
    }
    let mut doc = read(layout)?;
    let since = time::OffsetDateTime::now_utc()
        .replace_nanosecond(0)
        .unwrap_or_else(|_| time::OffsetDateTime::now_utc())
        .format(&time::format_description::well_known::Rfc3339)
        .context("formatting the time")?;
    let t = table(&mut doc)?;
    t.insert(PAUSED, value(true));
    t.insert(PAUSED_SINCE, value(since.clone()));
    write(layout, &doc)?;
    Ok(Paused { since: Some(since) })
}

/// Resume automatic checkpoints; whether they were paused.
pub fn resume(layout: &Layout) -> Result<bool> {
    let was = paused(layout).is_some();
    let mut doc = read(layout)?;
    let Some(t) = doc.get_mut(TABLE).and_then(Item::as_table_mut) else {
        return Ok(was);
    };
    let had = t.remove(PAUSED).is_some() | t.remove(PAUSED_SINCE).is_some();
    if had {
        write(layout, &doc)?;
    }
    Ok(was)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pause_resume_and_the_cap_live_beside_the_remotes() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::new(dir.path());
        std::fs::write(
            layout.config_file(),
            "[remote.origin]\nurl = \"file:///x\"\n",
        )
        .unwrap();
        assert_eq!(paused(&layout), None);
        let p = pause(&layout).unwrap();
        assert!(p.since.is_some());
        assert_eq!(
            pause(&layout).unwrap(),
            p,
            "a second pause keeps the first's time"
        );
        assert_eq!(paused(&layout), Some(p));
        assert!(resume(&layout).unwrap());
        assert!(!resume(&layout).unwrap());
        assert_eq!(paused(&layout), None);
        let text = std::fs::read_to_string(layout.config_file()).unwrap();
        assert!(text.contains("[remote.origin]"), "{text}");
        std::fs::write(
            layout.config_file(),
            "[checkpoints]\npaused = true\nmax_manual_per_session = 3\n",
        )
        .unwrap();
        assert_eq!(paused(&layout), Some(Paused { since: None }));
        assert_eq!(max_manual(&layout).unwrap(), Some(3));
        std::fs::write(
            layout.config_file(),
            "[checkpoints]\nmax_manual_per_session = -1\n",
        )
        .unwrap();
        assert!(max_manual(&layout).is_err());
    }
}
