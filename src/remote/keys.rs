//! The names of everything rewind puts on a remote, under its URL's prefix
//! (docs/remote.md "What is uploaded"): the one place they are spelled.
//!
//! ```text
//! packs/<32 hex>.pack                   records, as a local pack holds them
//! packs/<32 hex>.idx                    its index, uploaded after the pack
//! packs/<32 hex>.gc                     gc found the pack unreferenced (deleted by a later gc)
//! sessions/<id>/chunks/<32 hex>.jsonl   whole lines of a session file
//! sessions/<id>/manifests/<writer>.json one store's copy of the session, written last
//! ```
//!
//! Nothing but a manifest is ever written twice: a pack has a random
//! 128-bit name of its own (so a pack pushed again never lands on a key a
//! gc is deleting), and a chunk is named by the xxh3-128 of its bytes (a
//! chunk uploaded again writes the same bytes).

use object_store::path::Path;

pub use crate::session::is_safe_component;
use crate::session::SessionId;

const PACKS: &str = "packs";
const SESSIONS: &str = "sessions";
const CHUNKS: &str = "chunks";
const MANIFESTS: &str = "manifests";

pub fn packs_dir() -> Path {
    Path::from(PACKS)
}

pub fn pack(name: &str) -> Path {
    Path::from(format!("{PACKS}/{name}.pack"))
}

pub fn pack_index(name: &str) -> Path {
    Path::from(format!("{PACKS}/{name}.idx"))
}

/// gc's mark on a pack it found unreferenced: a later gc deletes the
/// pack if it still is, and a push does not count on its objects.
pub fn pack_mark(name: &str) -> Path {
    Path::from(format!("{PACKS}/{name}.gc"))
}

pub fn sessions_dir() -> Path {
    Path::from(SESSIONS)
}

pub fn chunk(session: &SessionId, hash: &str) -> Path {
    Path::from(format!("{SESSIONS}/{session}/{CHUNKS}/{hash}.jsonl"))
}

/// Everything of one session: its chunks and manifests.
pub fn session_dir(session: &SessionId) -> Path {
    Path::from(format!("{SESSIONS}/{session}"))
}

pub fn manifests_dir(session: &SessionId) -> Path {
    Path::from(format!("{SESSIONS}/{session}/{MANIFESTS}"))
}

pub fn manifest(session: &SessionId, writer: &str) -> Path {
    Path::from(format!("{SESSIONS}/{session}/{MANIFESTS}/{writer}.json"))
}

/// The session id and writer a manifest's key names, when it is one
/// rewind writes (both of the id grammar). A listing is a remote's bytes:
/// anything else under `sessions/` is not rewind's, and callers skip it.
pub fn parse_manifest_key(key: &Path) -> Option<(SessionId, String)> {
    let parts: Vec<_> = key.parts().collect();
    let [s, session, m, file] = &parts[..] else {
        return None;
    };
    let writer = file.as_ref().strip_suffix(".json")?;
    if s.as_ref() != SESSIONS || m.as_ref() != MANIFESTS || !is_safe_component(writer) {
        return None;
    }
    let session = SessionId::parse(session.as_ref()).ok()?;
    Some((session, writer.to_owned()))
}

/// The session id a chunk's key names, when it is one rewind writes.
pub fn parse_chunk_key(key: &Path) -> Option<SessionId> {
    let parts: Vec<_> = key.parts().collect();
    let [s, session, c, file] = &parts[..] else {
        return None;
    };
    let hash = file.as_ref().strip_suffix(".jsonl")?;
    if s.as_ref() != SESSIONS || c.as_ref() != CHUNKS || !is_hash(hash) {
        return None;
    }
    SessionId::parse(session.as_ref()).ok()
}

/// What a key under `packs/` is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PackKey {
    Pack(String),
    Index(String),
    Mark(String),
}

/// A listed key under `packs/`, when it is one of rewind's.
pub fn parse_pack_key(key: &Path) -> Option<PackKey> {
    let file = key.filename()?;
    let (name, ext) = file.split_once('.')?;
    if !is_hash(name) {
        return None;
    }
    let name = name.to_owned();
    match ext {
        "pack" => Some(PackKey::Pack(name)),
        "idx" => Some(PackKey::Index(name)),
        "gc" => Some(PackKey::Mark(name)),
        _ => None,
    }
}

/// 32 lowercase hex characters: an xxh3-128 as rewind spells it.
pub fn is_hash(s: &str) -> bool {
    s.len() == 32
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listed_keys_type_their_session_id_or_are_not_rewinds() {
        let id = SessionId::parse("4f0e-77aa").unwrap();
        let m = manifest(&id, "0123456789abcdef");
        assert_eq!(
            parse_manifest_key(&m),
            Some((id.clone(), "0123456789abcdef".to_owned()))
        );
        let c = chunk(&id, &"a".repeat(32));
        assert_eq!(parse_chunk_key(&c), Some(id));
        // Names a hostile remote could list: none is typed, so none names a
        // file, a state or a key of rewind's.
        for junk in ["..", "a.b", "a%20b", "é", &"x".repeat(65)] {
            let m = Path::from(format!("sessions/{junk}/manifests/0123456789abcdef.json"));
            assert_eq!(parse_manifest_key(&m), None, "{junk}");
            let c = Path::from(format!("sessions/{junk}/chunks/{}.jsonl", "a".repeat(32)));
            assert_eq!(parse_chunk_key(&c), None, "{junk}");
        }
    }
}
