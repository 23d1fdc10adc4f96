//! Where everything lives in a store: the one place the names of the store's
//! files and directories are spelled. It mirrors the "Layout" section of
//! docs/format.md, which is the specification: a name changed here is an
//! on-disk format change (a store format version bump, format.md
//! "Versions"), and every item here has its line there.
//!
//! ```text
//! <store>/
//!   VERSION, .tmp-<16 hex>      store format version, and one being written
//!   objects/ab/<30 hex>         loose objects (fan-out: store::objects)
//!   objects/pack/               packs and their indexes (file names: store::pack)
//!   sessions/<stamp>_<id>.jsonl session files the store created
//!   registry/<16 hex>           one file per session the store has served
//!   cache/stat-<16 hex>.bin     stat cache of one project root
//!   gc.lock, gc-generation      who may delete objects (store::generation)
//!   hooks/sessions/<agent>-<hash>.json  an agent session's rewind session (hooks)
//!   hooks/failures.log          what agent hooks could not do (hooks)
//!   config.toml                 the store's remotes (remote::config)
//!   remote/writer, remote/<name>/  this store's writer id; one remote's state (remote)
//! <any session file>.journal    a restore in progress, beside its session
//! ```
//!
//! The names *inside* `objects/` (fan-out directories, object and pack
//! file names) belong to the object store's own modules, which own their
//! formats; the temp prefix they share is [`TEMP_PREFIX`].

use std::path::{Path, PathBuf};

use xxhash_rust::xxh3::xxh3_64;

/// Prefix of the temp files the store writes before renaming them into
/// place (`VERSION`, objects, pack indexes; the temps of a stat cache and
/// of `gc-generation` have it after the file's name). Never a valid object name
/// (those are 30 hex characters), so listings can tell them apart and gc
/// can remove a crashed writer's leftovers.
pub const TEMP_PREFIX: &str = ".tmp-";

const VERSION_FILE: &str = "VERSION";
const OBJECTS_DIR: &str = "objects";
const PACK_DIR: &str = "pack";
const SESSIONS_DIR: &str = "sessions";
const SESSION_EXTENSION: &str = "jsonl";
const REGISTRY_DIR: &str = "registry";
const CACHE_DIR: &str = "cache";
const STAT_CACHE_PREFIX: &str = "stat-";
const STAT_CACHE_SUFFIX: &str = ".bin";
const GC_LOCK_FILE: &str = "gc.lock";
const GENERATION_FILE: &str = "gc-generation";
const JOURNAL_SUFFIX: &str = ".journal";
const HOOKS_DIR: &str = "hooks";
const HOOK_SESSIONS_DIR: &str = "sessions";
const HOOK_FORKS_DIR: &str = "forks";
const HOOK_FAILURES_FILE: &str = "failures.log";
const CONFIG_FILE: &str = "config.toml";
const REMOTE_DIR: &str = "remote";
const REMOTE_WRITER_FILE: &str = "writer";

/// The paths of one store, by its root. Cheap to clone; touches no file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    root: PathBuf,
}

impl Layout {
    pub fn new(root: &Path) -> Layout {
        Layout {
            root: root.to_path_buf(),
        }
    }

    /// The store whose `sessions/` directory holds `session`, if that
    /// directory sits in a store (its parent has a `VERSION`).
    pub fn of_session(session: &Path) -> Option<Layout> {
        let dir = session.parent()?;
        if dir.file_name()? != SESSIONS_DIR {
            return None;
        }
        let layout = Layout::new(dir.parent()?);
        layout.version_file().is_file().then_some(layout)
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `VERSION`: the store format version.
    pub fn version_file(&self) -> PathBuf {
        self.root.join(VERSION_FILE)
    }

    /// `.tmp-<16 random hex>`: `VERSION` being written.
    pub fn version_temp(&self) -> PathBuf {
        self.root
            .join(format!("{TEMP_PREFIX}{:016x}", rand::random::<u64>()))
    }

    /// `objects/`: loose objects in fan-out directories, and `pack/`.
    pub fn objects_dir(&self) -> PathBuf {
        self.root.join(OBJECTS_DIR)
    }

    /// `objects/pack/`: packs and their indexes.
    pub fn pack_dir(&self) -> PathBuf {
        self.objects_dir().join(PACK_DIR)
    }

    /// `sessions/`: the session files the store created.
    pub fn sessions_dir(&self) -> PathBuf {
        self.root.join(SESSIONS_DIR)
    }

    /// `sessions/<timestamp>_<sessionId>.jsonl` (pi's naming): `timestamp`
    /// is the header's, with `:` and `.` replaced by `-`.
    pub fn new_session_file(&self, timestamp: &str, session_id: &str) -> PathBuf {
        let stamp = timestamp.replace([':', '.'], "-");
        self.sessions_dir()
            .join(format!("{stamp}_{session_id}.{SESSION_EXTENSION}"))
    }

    /// The session id in the name of a file [`Layout::new_session_file`]
    /// named (`<timestamp>_<sessionId>.jsonl`).
    pub fn session_id_of(path: &Path) -> Option<&str> {
        if !Layout::is_session_file(path) {
            return None;
        }
        let (_, id) = path.file_stem()?.to_str()?.rsplit_once('_')?;
        Some(id)
    }

    /// Whether a file in `sessions/` is a session file (`*.jsonl`).
    pub fn is_session_file(path: &Path) -> bool {
        path.extension().is_some_and(|x| x == SESSION_EXTENSION)
    }

    /// `config.toml`: the store's settings (its remotes, docs/remote.md).
    pub fn config_file(&self) -> PathBuf {
        self.root.join(CONFIG_FILE)
    }

    /// `remote/writer`: this store's name on every remote (16 hex), which
    /// names its manifests.
    pub fn remote_writer_file(&self) -> PathBuf {
        self.root.join(REMOTE_DIR).join(REMOTE_WRITER_FILE)
    }

    /// `remote/<name>/`: what this store knows of one remote (its pack
    /// indexes, how far each session was pushed).
    pub fn remote_dir(&self, name: &str) -> PathBuf {
        self.root.join(REMOTE_DIR).join(name)
    }

    /// `remote/.pulled/<session id>`: the session came from a remote
    /// (`rewind pull`), so it is not this project's own: no command takes
    /// it as the newest session unless it is named (docs/remote.md). The
    /// dot keeps it apart from every remote's name.
    pub fn pulled_marker(&self, session_id: &str) -> PathBuf {
        self.root.join(REMOTE_DIR).join(".pulled").join(session_id)
    }

    /// Whether the session file `path` was pulled from a remote.
    pub fn is_pulled(&self, path: &Path) -> bool {
        Layout::session_id_of(path).is_some_and(|id| self.pulled_marker(id).exists())
    }

    /// `registry/`: one file per session the store has served.
    pub fn registry_dir(&self) -> PathBuf {
        self.root.join(REGISTRY_DIR)
    }

    /// `registry/<xxh3-64 of the session path as opened>`.
    pub fn registration(&self, session: &Path) -> PathBuf {
        self.registry_dir()
            .join(hash_name(session.as_os_str().as_encoded_bytes()))
    }

    /// `server/`: the project's hook server (mode 0700): its socket
    /// `hook.sock`, its lock `server.lock` and its log `server.log`.
    pub fn server_dir(&self) -> PathBuf {
        self.root.join("server")
    }

    /// `hooks/sessions/`: which rewind session each agent session (Claude
    /// Code, Codex, Gemini CLI) records into, one small JSON file each.
    pub fn hook_sessions_dir(&self) -> PathBuf {
        self.root.join(HOOKS_DIR).join(HOOK_SESSIONS_DIR)
    }

    /// `hooks/forks/`: conversations a conversation restore wrote for an
    /// agent that imports a file (Gemini CLI's `--session-file`), each with
    /// the rewind session its continuation records into.
    pub fn hook_forks_dir(&self) -> PathBuf {
        self.root.join(HOOKS_DIR).join(HOOK_FORKS_DIR)
    }

    /// `hooks/failures.log`: one line per hook event that could not be
    /// recorded (the agent is never told; `rewind status` shows them).
    pub fn hook_failures(&self) -> PathBuf {
        self.root.join(HOOKS_DIR).join(HOOK_FAILURES_FILE)
    }

    /// `cache/`: the stat caches.
    pub fn cache_dir(&self) -> PathBuf {
        self.root.join(CACHE_DIR)
    }

    /// `cache/stat-<project hash>.bin`: the stat cache of the project whose
    /// canonical root is `project_root`.
    pub fn stat_cache(&self, project_root: &Path) -> PathBuf {
        self.cache_dir().join(format!(
            "{STAT_CACHE_PREFIX}{}{STAT_CACHE_SUFFIX}",
            project_hash(project_root)
        ))
    }

    /// `cache/scan-<project hash>.json`: the last scan of a process without
    /// a watcher (docs/format.md "Saved scan").
    pub fn saved_scan(&self, project_root: &Path) -> PathBuf {
        self.cache_dir()
            .join(format!("scan-{}.json", project_hash(project_root)))
    }

    /// `cache/flat-<project hash>.bin`: the files of that scan's tree
    /// (docs/format.md "Saved flat tree").
    pub fn saved_flat(&self, project_root: &Path) -> PathBuf {
        self.cache_dir()
            .join(format!("flat-{}.bin", project_hash(project_root)))
    }

    /// Whether a file name in `cache/` is a stat cache's.
    pub fn is_stat_cache_name(name: &str) -> bool {
        name.starts_with(STAT_CACHE_PREFIX) && name.ends_with(STAT_CACHE_SUFFIX)
    }

    /// `<cache>.tmp-<pid>`: a stat cache being saved.
    pub fn stat_cache_temp(cache: &Path) -> PathBuf {
        let mut name = cache.file_name().unwrap_or_default().to_os_string();
        name.push(format!("{TEMP_PREFIX}{}", std::process::id()));
        cache.with_file_name(name)
    }

    /// `gc.lock`: exclusive for gc, shared by writers.
    pub fn gc_lock(&self) -> PathBuf {
        self.root.join(GC_LOCK_FILE)
    }

    /// `gc-generation`: bumped by every gc before it deletes.
    pub fn generation(&self) -> PathBuf {
        self.root.join(GENERATION_FILE)
    }

    /// `gc-generation.tmp-<pid>-<8 random hex>`: the generation being replaced.
    pub fn generation_temp(&self) -> PathBuf {
        self.root.join(format!(
            "{GENERATION_FILE}{TEMP_PREFIX}{}-{:08x}",
            std::process::id(),
            rand::random::<u32>()
        ))
    }

    /// `<session file>.journal`: the restore journal, beside its session
    /// file wherever that is (so a session copied elsewhere keeps it).
    pub fn session_journal(session: &Path) -> PathBuf {
        let mut name = session.as_os_str().to_os_string();
        name.push(JOURNAL_SUFFIX);
        PathBuf::from(name)
    }

    /// `<journal>.tmp`: a journal being written.
    pub fn journal_temp(journal: &Path) -> PathBuf {
        let mut name = journal.as_os_str().to_os_string();
        name.push(".tmp");
        PathBuf::from(name)
    }
}

/// rewind's home, `$REWIND_HOME` (default `$XDG_DATA_HOME/rewind`, i.e.
/// `~/.local/share/rewind`), and every path in it (docs/format.md "Store
/// location"): the projects' default stores, the hook failures no store
/// took, and what `rewind install` changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Home {
    root: PathBuf,
}

impl Home {
    /// The home the environment names.
    pub fn from_env() -> Home {
        let root = std::env::var_os("REWIND_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("XDG_DATA_HOME").map(|d| PathBuf::from(d).join("rewind")))
            .or_else(|| {
                std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share/rewind"))
            })
            .unwrap_or_else(|| PathBuf::from(".rewind"));
        Home { root }
    }

    pub fn new(root: PathBuf) -> Home {
        Home { root }
    }

    /// `projects/<projectHash>`: the project's default store.
    pub fn project_store(&self, project_root: &Path) -> PathBuf {
        self.root.join("projects").join(project_hash(project_root))
    }

    /// `hook-failures.log`: hook failures that no project store took.
    pub fn hook_failures(&self) -> PathBuf {
        self.root.join("hook-failures.log")
    }

    /// `installed.json`: the agents' settings `rewind install` changed.
    pub fn installed(&self) -> PathBuf {
        self.root.join("installed.json")
    }
}

/// `<projectHash>`: xxh3-64 of the canonical project root path, as 16 hex
/// digits. It names the project's default store and its stat cache.
pub fn project_hash(project_root: &Path) -> String {
    hash_name(project_root.as_os_str().as_encoded_bytes())
}

fn hash_name(bytes: &[u8]) -> String {
    format!("{:016x}", xxh3_64(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names docs/format.md specifies, spelled out once more: a change
    /// here is a format change, not a refactoring.
    #[test]
    fn paths_are_the_documented_ones() {
        let l = Layout::new(Path::new("/s"));
        assert_eq!(l.version_file(), Path::new("/s/VERSION"));
        assert_eq!(l.objects_dir(), Path::new("/s/objects"));
        assert_eq!(l.pack_dir(), Path::new("/s/objects/pack"));
        assert_eq!(l.sessions_dir(), Path::new("/s/sessions"));
        assert_eq!(l.registry_dir(), Path::new("/s/registry"));
        assert_eq!(l.gc_lock(), Path::new("/s/gc.lock"));
        assert_eq!(l.generation(), Path::new("/s/gc-generation"));
        assert_eq!(
            l.stat_cache(Path::new("/tmp/demo")),
            Path::new("/s/cache/stat-b60430c60b57b3c7.bin")
        );
        assert!(Layout::is_stat_cache_name("stat-b60430c60b57b3c7.bin"));
        assert!(!Layout::is_stat_cache_name(
            "stat-b60430c60b57b3c7.bin.tmp-7"
        ));
        assert_eq!(
            l.new_session_file("2026-11-21T19:24:13.116Z", "abc"),
            Path::new("/s/sessions/2026-11-21T19-24-13-116Z_abc.jsonl")
        );
        let named = l.new_session_file("2026-11-21T19:24:13.116Z", "4f0e-77aa");
        assert_eq!(Layout::session_id_of(&named), Some("4f0e-77aa"));
        assert_eq!(
            Layout::session_id_of(Path::new("/s/sessions/x_abc.jsonl.journal")),
            None
        );
        let journal = Layout::session_journal(Path::new("/x/a.jsonl"));
        assert_eq!(journal, Path::new("/x/a.jsonl.journal"));
        assert_eq!(
            Layout::journal_temp(&journal),
            Path::new("/x/a.jsonl.journal.tmp")
        );
        let temp = l.generation_temp();
        let name = temp.file_name().and_then(|n| n.to_str()).unwrap_or("");
        assert!(name.starts_with(&format!("gc-generation.tmp-{}-", std::process::id())));
        let temp = l.version_temp();
        let name = temp.file_name().and_then(|n| n.to_str()).unwrap_or("");
        assert!(name.starts_with(".tmp-") && name.len() == 5 + 16);
    }
}
