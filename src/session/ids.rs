//! Entry and session ids, timestamps.

use time::OffsetDateTime;

/// The longest host-supplied entry id accepted (docs/protocol.md "Shared notions").
pub const MAX_HOST_ID_CHARS: usize = 64;

/// A random id of 8 lowercase hex chars (pi's entry id shape) for which `taken` is false.
///
/// 32 random bits collide rarely even in long sessions, and a collision just draws again.
pub fn new_entry_id(taken: impl Fn(&str) -> bool) -> String {
    loop {
        let id = format!("{:08x}", rand::random::<u32>());
        if !taken(&id) {
            return id;
        }
    }
}

/// A random UUID v4, formatted by hand so no uuid crate is needed.
pub fn new_session_id() -> String {
    let mut b: [u8; 16] = rand::random();
    b[6] = (b[6] & 0x0f) | 0x40; // version 4
    b[8] = (b[8] & 0x3f) | 0x80; // RFC 4122 variant
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// Now, in UTC, as `2026-11-21T19:12:00.123Z` (what JavaScript's `toISOString` gives, so
/// pi and rewind timestamps sort and parse alike).
pub fn now_iso() -> String {
    iso_millis(OffsetDateTime::now_utc())
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
            let id = new_entry_id(|_| false);
            assert_eq!(id.len(), 8);
            assert!(id.bytes().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')));
        }
        // The first two draws are reported taken; the third is accepted.
        let calls = Cell::new(0);
        let id = new_entry_id(|_| {
            calls.set(calls.get() + 1);
            calls.get() <= 2
        });
        assert_eq!(calls.get(), 3);
        assert_eq!(id.len(), 8);
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
