//! A store's remotes, kept in its `config.toml` (docs/remote.md "Setting
//! up"): `[remote.NAME] url = "..."`. Only names and URLs: credentials
//! stay in each cloud's own environment and files.

use std::fs;
use std::io::{self, Write};
use std::path::PathBuf;

use toml_edit::{value, DocumentMut, Item, Table};
use xxhash_rust::xxh3::xxh3_64;

use super::error::RemoteError;
use crate::durability::atomic_write;
use crate::store::Layout;

const REMOTE_TABLE: &str = "remote";
const URL_KEY: &str = "url";
const AUTO_PUSH_KEY: &str = "auto_push";

/// A remote as configured, or a URL used as it is: its name as the person
/// gave it (a URL is its own name) and URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemoteSpec {
    pub name: String,
    pub url: String,
    /// Sidecars and hook servers of the store push to it in the background.
    pub auto_push: bool,
}

impl RemoteSpec {
    /// Where the store keeps what it knows of the remote (what it pushed,
    /// its last error): by URL, so a remote used by its URL and named later,
    /// or renamed, is the same remote and nothing is sent again
    /// (docs/remote.md "Names and URLs"). State that older builds kept under
    /// the name moves here once.
    pub fn state_dir(&self, layout: &Layout) -> PathBuf {
        let by_url = layout.remote_dir(&url_key(&self.url));
        if valid_name(&self.name) && !by_url.exists() {
            let by_name = layout.remote_dir(&self.name);
            if by_name.is_dir() {
                if let Err(e) = fs::rename(&by_name, &by_url) {
                    tracing::warn!(from = %by_name.display(), error = %e, "could not move a remote's state to its URL's place");
                    return by_name;
                }
            }
        }
        by_url
    }
}

/// The name of a URL's local state: `url-<xxh3 of the URL>` (no configured
/// name may begin with `url-`).
fn url_key(url: &str) -> String {
    format!("url-{:016x}", xxh3_64(url.as_bytes()))
}

fn read(layout: &Layout) -> Result<DocumentMut, RemoteError> {
    let path = layout.config_file();
    match fs::read_to_string(&path) {
        Ok(text) => text.parse::<DocumentMut>().map_err(|e| {
            RemoteError::io(
                "reading",
                &path,
                io::Error::new(io::ErrorKind::InvalidData, e.to_string()),
            )
        }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(DocumentMut::new()),
        Err(e) => Err(RemoteError::io("reading", &path, e)),
    }
}

fn write(layout: &Layout, doc: &DocumentMut) -> Result<(), RemoteError> {
    let path = layout.config_file();
    let temp = path.with_extension(format!("toml.tmp-{}", std::process::id()));
    atomic_write(&path, &temp, true, |f| {
        f.write_all(doc.to_string().as_bytes())
    })
    .map_err(|e| RemoteError::io("writing", &path, e))
}

/// Every configured remote, by name.
pub fn list(layout: &Layout) -> Result<Vec<RemoteSpec>, RemoteError> {
    let doc = read(layout)?;
    let Some(table) = doc.get(REMOTE_TABLE).and_then(Item::as_table) else {
        return Ok(Vec::new());
    };
    let mut out: Vec<RemoteSpec> = table
        .iter()
        .filter_map(|(name, item)| {
            let url = item.get(URL_KEY)?.as_str()?;
            Some(RemoteSpec {
                name: name.to_owned(),
                url: url.to_owned(),
                auto_push: item
                    .get(AUTO_PUSH_KEY)
                    .and_then(Item::as_bool)
                    .unwrap_or(false),
            })
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        && !name.starts_with("url-")
}

/// Adds a remote; its URL must parse (nothing is contacted). With
/// `auto_push`, the store's sidecars and hook servers push to it as they record.
pub fn add(
    layout: &Layout,
    name: &str,
    url: &str,
    auto_push: bool,
) -> Result<RemoteSpec, RemoteError> {
    if !valid_name(name) {
        return Err(RemoteError::BadName(name.to_owned()));
    }
    super::backend::Backend::open(url)?;
    let mut doc = read(layout)?;
    if !doc.contains_key(REMOTE_TABLE) {
        let mut t = Table::new();
        t.set_implicit(true);
        doc.insert(REMOTE_TABLE, Item::Table(t));
    }
    let table = doc[REMOTE_TABLE]
        .as_table_mut()
        .ok_or_else(|| bad_config(layout, "`remote` is not a table"))?;
    if table.contains_key(name) {
        return Err(RemoteError::RemoteExists(name.to_owned()));
    }
    let mut entry = Table::new();
    entry.insert(URL_KEY, value(url));
    if auto_push {
        entry.insert(AUTO_PUSH_KEY, value(true));
    }
    table.insert(name, Item::Table(entry));
    write(layout, &doc)?;
    Ok(RemoteSpec {
        name: name.to_owned(),
        url: url.to_owned(),
        auto_push,
    })
}

/// Removes a remote from the config and forgets what this store knew of
/// it; nothing on the remote is touched.
pub fn remove(layout: &Layout, name: &str) -> Result<(), RemoteError> {
    let all = list(layout)?;
    let Some(spec) = all.iter().find(|r| r.name == name) else {
        return Err(RemoteError::UnknownRemote {
            name: name.to_owned(),
            configured: names(&all),
        });
    };
    let mut doc = read(layout)?;
    doc.get_mut(REMOTE_TABLE)
        .and_then(Item::as_table_mut)
        .and_then(|t| t.remove(name));
    write(layout, &doc)?;
    // Another name for the same URL still knows what was pushed there.
    if all.iter().any(|r| r.name != name && r.url == spec.url) {
        return Ok(());
    }
    let dir = spec.state_dir(layout);
    match fs::remove_dir_all(&dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(RemoteError::io("removing", &dir, e)),
    }
}

/// The remote `which` names: a configured name, or a URL used as it is
/// (its name is the URL; its local state lives by URL, see
/// [`RemoteSpec::state_dir`]). `None`
/// means the only configured remote.
pub fn resolve(layout: &Layout, which: Option<&str>) -> Result<RemoteSpec, RemoteError> {
    match which {
        Some(w) if w.contains("://") => Ok(RemoteSpec {
            name: w.to_owned(),
            url: w.to_owned(),
            auto_push: false,
        }),
        Some(path) if path.starts_with(['/', '.', '~']) => {
            Err(RemoteError::NotARemote(path.to_owned()))
        }
        Some(name) => {
            let all = list(layout)?;
            match all.iter().find(|r| r.name == name) {
                Some(r) => Ok(r.clone()),
                None => Err(RemoteError::UnknownRemote {
                    name: name.to_owned(),
                    configured: names(&all),
                }),
            }
        }
        None => {
            let mut all = list(layout)?;
            match all.len() {
                1 => Ok(all.remove(0)),
                0 => Err(RemoteError::NoRemote),
                _ => Err(RemoteError::SeveralRemotes(names(&all))),
            }
        }
    }
}

fn names(all: &[RemoteSpec]) -> String {
    all.iter()
        .map(|r| r.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The environment variable that names a remote (a name or a URL): the
/// default of `push` and `pull`, and for sidecars and hook servers the
/// remote they push to in the background.
pub const REMOTE_ENV: &str = "REWIND_REMOTE";

/// The remote a sidecar or hook server of the store pushes to in the
/// background: `explicit` (an `initialize` option), else `REWIND_REMOTE`,
/// else a configured remote with `auto_push`; `None` for none.
pub fn auto_push(
    layout: &Layout,
    explicit: Option<&str>,
) -> Result<Option<RemoteSpec>, RemoteError> {
    let env = std::env::var(REMOTE_ENV).ok().filter(|v| !v.is_empty());
    if let Some(which) = explicit.or(env.as_deref()) {
        return resolve(layout, Some(which)).map(Some);
    }
    Ok(list(layout)?.into_iter().find(|r| r.auto_push))
}

fn bad_config(layout: &Layout, why: &str) -> RemoteError {
    RemoteError::io(
        "reading",
        &layout.config_file(),
        io::Error::new(io::ErrorKind::InvalidData, why.to_owned()),
    )
}

/// This store's writer id on every remote (16 hex), made on first use.
pub fn writer_id(layout: &Layout) -> Result<String, RemoteError> {
    let path = layout.remote_writer_file();
    match fs::read_to_string(&path) {
        Ok(text) if super::keys::is_safe_component(text.trim()) => {
            return Ok(text.trim().to_owned())
        }
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(RemoteError::io("reading", &path, e)),
    }
    let id = format!("{:016x}", rand::random::<u64>());
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(|e| RemoteError::io("creating", dir, e))?;
    }
    let temp = path.with_extension(format!("tmp-{}", std::process::id()));
    atomic_write(&path, &temp, true, |f| f.write_all(id.as_bytes()))
        .map_err(|e| RemoteError::io("writing", &path, e))?;
    Ok(id)
}
