//! Entry and session ids, timestamps.

use std::borrow::Borrow;
use std::fmt;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

/// The longest host-supplied entry id accepted (docs/protocol.md "Shared notions").
pub const MAX_HOST_ID_CHARS: usize = 64;

/// The id of one entry of a session (docs/architecture.md "Glossary": entry).
///
/// Text, not a number: rewind draws 8 lowercase hex chars ([`EntryId::generate`]), but a
/// host may name its own entries with up to 64 chars ([`valid_host_id`]) and a session file
/// holds whatever pi and hosts wrote, so an id read back is kept exactly as spelled. It
/// serializes as that string, so session lines read and write unchanged.
///
/// There is deliberately no `From<String>`: an id comes from a session line, a caller's
/// request or the generator, each through its own constructor, so a string does not turn
/// into an id by accident (a path, a hash, a label).
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct EntryId(String);

impl EntryId {
    /// An id as read from outside: a session line's `id`, `parentId` or `targetId`, or an
    /// id a request or a command line names. It is not checked against [`valid_host_id`]:
    /// an id naming no entry is the lookup's error (unknown entry), and ids pi and hosts
    /// already wrote must stay readable whatever their shape. A new entry's id supplied by
    /// a host is checked when it is appended (`SessionLog::append`).
    pub fn from_input(id: impl Into<String>) -> EntryId {
        EntryId(id.into())
    }

    /// A random id of 8 lowercase hex chars (pi's entry id shape) for which `taken` is
    /// false.
    ///
    /// 32 random bits collide rarely even in long sessions, and a collision just draws
    /// again.
    pub fn generate(taken: impl Fn(&EntryId) -> bool) -> EntryId {
        loop {
            let id = EntryId(format!("{:08x}", rand::random::<u32>()));
            if !taken(&id) {
                return id;
            }
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The id's text, for the wire edge and other places that hold text.
    pub fn into_string(self) -> String {
        self.0
    }
}

/// The id as written, honouring width and alignment (`{id:<8}` lines up columns).
impl fmt::Display for EntryId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

/// As the string's: messages that quote an id (`{id:?}`) read as they did when ids were
/// strings.
impl fmt::Debug for EntryId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl AsRef<str> for EntryId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// Maps keyed by `EntryId` are looked up with a `&str` (an id a caller typed); `String`'s
/// `Hash`, `Eq` and `Ord` are `str`'s, so the two agree as `Borrow` requires.
impl Borrow<str> for EntryId {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl PartialEq<str> for EntryId {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for EntryId {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

/// The id of one of rewind's sessions (docs/architecture.md "Glossary": session): what
/// names its file, its remote keys (`sessions/<id>/…`) and its state under `remote/`.
///
/// Only [`SessionId::parse`] and [`SessionId::generate`] make one, so a `SessionId` is
/// always of the id grammar ([`is_safe_component`]) and can name a file or a key as it is:
/// whatever reads an id from outside (a command line, a remote's listing or manifest, a
/// session file's header, a file name) parses it there, and what it hands on needs no
/// further check. It (de)serializes as its string, refusing a string that is not one, so
/// every format holding it reads and writes unchanged.
///
/// A session file's header keeps its `id` as text ([`super::Header`]): rewind reads
/// session files pi and hosts wrote, whose ids are theirs; it parses one where it names
/// something with it (a remote push).
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct SessionId(String);

/// Text that is not a session id, quoted through `printable` when shown (it came from
/// outside).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{} is not a session id (1 to 64 of a-z, A-Z, 0-9, '-' and '_')", crate::printable::printable(.0))]
pub struct InvalidSessionId(pub String);

impl SessionId {
    /// `text` as a session id, when it is of the grammar.
    pub fn parse(text: &str) -> Result<SessionId, InvalidSessionId> {
        if is_safe_component(text) {
            Ok(SessionId(text.to_owned()))
        } else {
            Err(InvalidSessionId(text.to_owned()))
        }
    }

    /// A random UUID v4, formatted by hand so no uuid crate is needed.
    pub fn generate() -> SessionId {
        let mut b: [u8; 16] = rand::random();
        b[6] = (b[6] & 0x0f) | 0x40; // version 4
        b[8] = (b[8] & 0x3f) | 0x80; // RFC 4122 variant
        let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
        SessionId(format!(
            "{}-{}-{}-{}-{}",
            &hex[0..8],
            &hex[8..12],
            &hex[12..16],
            &hex[16..20],
            &hex[20..32]
        ))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

impl TryFrom<String> for SessionId {
    type Error = InvalidSessionId;

    fn try_from(text: String) -> Result<SessionId, InvalidSessionId> {
        if is_safe_component(&text) {
            Ok(SessionId(text))
        } else {
            Err(InvalidSessionId(text))
        }
    }
}

impl From<SessionId> for String {
    fn from(id: SessionId) -> String {
        id.0
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

/// As the string's, so messages quoting an id read as they did.
impl fmt::Debug for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl AsRef<str> for SessionId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// Sets of ids are looked up with a `&str` (a name a listing or a file holds); `String`'s
/// `Hash`, `Eq` and `Ord` are `str`'s, so the two agree as `Borrow` requires.
impl Borrow<str> for SessionId {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl PartialEq<str> for SessionId {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for SessionId {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

/// A session id or a store's writer id as it may name a file or a remote key: the
/// characters an entry id may have, minus '/' and anything a URL would escape (so never
/// `.` or `..` either), at most 64.
pub fn is_safe_component(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// A new session's id, as its header holds it.
pub fn new_session_id() -> String {
    SessionId::generate().into_string()
}

/// Now, in UTC, as `2026-11-21T19:12:00.123Z` (what JavaScript's `toISOString` gives, so
/// pi and rewind timestamps sort and parse alike).
pub fn now_iso() -> String {
    iso_millis(OffsetDateTime::now_utc())
}

/// `text` as [`now_iso`] spells a time, when it is an RFC 3339 time at all:
/// what reaches a file name from a session header someone else wrote is
/// only ever this (docs/remote.md "What a remote can and cannot do to you").
pub fn canonical_iso(text: &str) -> Option<String> {
    OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339)
        .ok()
        .map(iso_millis)
}

/// Formatted by hand rather than with a format description: this cannot fail, so there is
/// no error path to handle for something as basic as a timestamp.
fn iso_millis(t: OffsetDateTime) -> String {
    let t = t.to_offset(time::UtcOffset::UTC);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second(),
        t.millisecond()
    )
}

/// Whether a host may use `id` as an entry id: non-empty, no whitespace, at most 64 chars.
pub fn valid_host_id(id: &str) -> bool {
    !id.is_empty()
        && !id.chars().any(char::is_whitespace)
        && id.chars().count() <= MAX_HOST_ID_CHARS
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn entry_ids_are_8_lowercase_hex_and_avoid_taken() {
        for _ in 0..100 {
            let id = EntryId::generate(|_| false).into_string();
            assert_eq!(id.len(), 8);
            assert!(id.bytes().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')));
        }
        // The first two draws are reported taken; the third is accepted.
        let calls = Cell::new(0);
        let id = EntryId::generate(|_| {
            calls.set(calls.get() + 1);
            calls.get() <= 2
        });
        assert_eq!(calls.get(), 3);
        assert_eq!(id.as_str().len(), 8);
    }

    #[test]
    fn entry_ids_read_and_write_as_their_text() {
        // A host's id of any shape a session file may hold, kept as spelled.
        for text in ["86ce5c08", "msg-1:ü", "with space", ""] {
            let id = EntryId::from_input(text);
            let json = serde_json::to_string(&id).unwrap();
            assert_eq!(json, serde_json::to_string(text).unwrap());
            assert_eq!(serde_json::from_str::<EntryId>(&json).unwrap(), id);
            assert_eq!(id.to_string(), text);
            // Messages quote ids as they quoted strings.
            assert_eq!(format!("{id:?}"), format!("{text:?}"));
        }
        assert!(serde_json::from_str::<EntryId>("17").is_err());
        assert_eq!(format!("[{:<6}]", EntryId::from_input("ab")), "[ab    ]");
        // A map keyed by ids answers a lookup by text.
        let map = std::collections::HashMap::from([(EntryId::from_input("k"), 1)]);
        assert_eq!(map.get("k"), Some(&1));
    }

    #[test]
    fn session_ids_are_uuid_v4() {
        let id = new_session_id();
        let parts: Vec<&str> = id.split('-').collect();
        assert_eq!(
            parts.iter().map(|p| p.len()).collect::<Vec<_>>(),
            [8, 4, 4, 4, 12]
        );
        assert!(parts[2].starts_with('4'));
        assert!(matches!(&parts[3][..1], "8" | "9" | "a" | "b"));
        assert_ne!(id, new_session_id());
    }

    #[test]
    fn session_ids_parse_only_the_key_grammar() {
        for good in [
            "0f8e4c1a-1111-4222-8333-444455556666",
            "s1",
            "A_b-9",
            &"x".repeat(64),
        ] {
            let id = SessionId::parse(good).unwrap();
            assert_eq!(id.as_str(), good);
            assert_eq!(id.to_string(), good);
            assert_eq!(format!("{id:?}"), format!("{good:?}"));
        }
        // What a hostile remote, header or file name could hold: nothing that
        // leaves a directory, escapes in a URL or is empty.
        for bad in [
            "",
            ".",
            "..",
            "../x",
            "a/b",
            "a\\b",
            "a.b",
            "a b",
            "a%2Fb",
            "\u{1b}[2J",
            "é",
            &"x".repeat(65),
        ] {
            assert!(SessionId::parse(bad).is_err(), "{bad:?}");
            assert!(SessionId::try_from(bad.to_owned()).is_err(), "{bad:?}");
        }
        // The message shows the text escaped (it came from outside).
        let err = SessionId::parse("a\u{1b}b").unwrap_err().to_string();
        assert!(!err.contains('\u{1b}'), "{err}");
        assert_eq!(SessionId::generate().as_str().len(), 36);
    }

    #[test]
    fn session_ids_read_and_write_as_their_text() {
        let id = SessionId::parse("4f0e-77aa").unwrap();
        let json = serde_json::to_string(&id).unwrap();
        assert_eq!(json, "\"4f0e-77aa\"");
        assert_eq!(serde_json::from_str::<SessionId>(&json).unwrap(), id);
        // A value that cannot be typed is an error where it is read.
        assert!(serde_json::from_str::<SessionId>("\"../etc\"").is_err());
        assert!(serde_json::from_str::<SessionId>("17").is_err());
        let set = std::collections::HashSet::from([id]);
        assert!(set.contains("4f0e-77aa"));
    }

    #[test]
    fn timestamps_are_iso_utc_millis() {
        let t = time::macros::datetime!(2026-11-21 19:12:00.123456 +02:00);
        assert_eq!(iso_millis(t), "2026-11-21T17:12:00.123Z");
        let now = now_iso();
        assert_eq!(now.len(), 24);
        assert!(now.ends_with('Z'));
        let parsed = OffsetDateTime::parse(&now, &time::format_description::well_known::Rfc3339);
        assert!(parsed.is_ok(), "{now}");
    }

    #[test]
    fn host_id_rules() {
        assert!(valid_host_id("abc"));
        assert!(valid_host_id("msg-1:ü"));
        assert!(valid_host_id(&"x".repeat(64)));
        assert!(valid_host_id(&"ü".repeat(64)));
        assert!(!valid_host_id(&"x".repeat(65)));
        assert!(!valid_host_id(""));
        assert!(!valid_host_id("a b"));
        assert!(!valid_host_id("a\tb"));
        assert!(!valid_host_id("a\n"));
        assert!(!valid_host_id("a\u{2028}b"));
    }
}
