//! The three-way text merge behind `revert`, on the `diffy` crate: what the
//! crate renders as conflict markers is read back into segments, so that a
//! conflict can be reported hunk by hunk and written with markers that name
//! what each side is (docs/architecture.md "Revert").

use diffy::{ConflictStyle, IncompleteHunkStyle, MergeOptions};

/// A stretch of a merge result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Segment {
    /// Merged without conflict.
    Text(Vec<u8>),
    /// Both sides changed these lines.
    Conflict {
        /// The lines as the file has them now ("ours").
        current: Vec<u8>,
        /// The lines as the reverted change left them (the common ancestor).
        reverted: Vec<u8>,
        /// The lines as they were before the reverted change ("theirs").
        before: Vec<u8>,
    },
}

/// The outcome of merging one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Merged {
    Clean(Vec<u8>),
    Conflicts(Vec<Segment>),
}

/// Takes the change from `before` to `reverted` out of `current`: a three-way
/// merge with `reverted` as the common ancestor, `current` as ours and
/// `before` as theirs.
pub(crate) fn revert_text(reverted: &[u8], current: &[u8], before: &[u8]) -> Merged {
    // Markers longer than any marker-like run that starts a line of the
    // inputs, so that reading them back cannot mistake a line of the file
    // for one.
    let marker_len = [reverted, current, before]
        .iter()
        .map(|t| longest_marker_run(t))
        .max()
        .unwrap_or(0)
        .max(6)
        + 1;
    let mut options = MergeOptions::new();
    options
        .set_conflict_style(ConflictStyle::Diff3)
        .set_conflict_marker_length(marker_len)
        .set_incomplete_hunk_style(IncompleteHunkStyle::Git);
    match options.merge_bytes(reverted, current, before) {
        Ok(merged) => Merged::Clean(merged),
        Err(marked) => Merged::Conflicts(read_markers(&marked, marker_len)),
    }
}

/// The longest run of one of `<|=>` at the start of a line.
fn longest_marker_run(text: &[u8]) -> usize {
    text.split(|&b| b == b'\n')
        .filter_map(|line| {
            let first = *line.first()?;
            matches!(first, b'<' | b'|' | b'=' | b'>')
                .then(|| line.iter().take_while(|&&b| b == first).count())
        })
        .max()
        .unwrap_or(0)
}

/// Segments of diffy's diff3-style output with markers `marker_len` long.
fn read_markers(marked: &[u8], marker_len: usize) -> Vec<Segment> {
    let marker = |c: u8, label: &[u8]| -> Vec<u8> {
        let mut m = vec![c; marker_len];
        if !label.is_empty() {
            m.push(b' ');
            m.extend_from_slice(label);
        }
        m.push(b'\n');
        m
    };
    let (open, base, middle, close) = (
        marker(b'<', b"ours"),
        marker(b'|', b"original"),
        marker(b'=', b""),
        marker(b'>', b"theirs"),
    );
    enum In {
        Text,
        Current,
        Reverted,
        Before,
    }
    let mut out = Vec::new();
    let mut text = Vec::new();
    let (mut current, mut reverted, mut before) = (Vec::new(), Vec::new(), Vec::new());
    let mut state = In::Text;
    for line in marked.split_inclusive(|&b| b == b'\n') {
        match state {
            In::Text if line == open.as_slice() => {
                if !text.is_empty() {
                    out.push(Segment::Text(std::mem::take(&mut text)));
                }
                state = In::Current;
            }
            In::Current if line == base.as_slice() => state = In::Reverted,
            In::Reverted if line == middle.as_slice() => state = In::Before,
            In::Before if line == close.as_slice() => {
                out.push(Segment::Conflict {
                    current: std::mem::take(&mut current),
                    reverted: std::mem::take(&mut reverted),
                    before: std::mem::take(&mut before),
                });
                state = In::Text;
            }
            In::Text => text.extend_from_slice(line),
            In::Current => current.extend_from_slice(line),
            In::Reverted => reverted.extend_from_slice(line),
            In::Before => before.extend_from_slice(line),
        }
    }
    if !text.is_empty() {
        out.push(Segment::Text(text));
    }
    out
}

/// The file with git-style conflict markers (`<<<<<<< current`, `=======`,
/// `>>>>>>> {other}`), each at the start of a line.
pub(crate) fn with_markers(segments: &[Segment], other: &str) -> Vec<u8> {
    let all: Vec<&[u8]> = segments
        .iter()
        .flat_map(|s| match s {
            Segment::Text(t) => vec![t.as_slice()],
            Segment::Conflict {
                current, before, ..
            } => vec![current.as_slice(), before.as_slice()],
        })
        .collect();
    let len = all
        .iter()
        .map(|t| longest_marker_run(t))
        .max()
        .unwrap_or(0)
        .max(6)
        + 1;
    let mut out = Vec::new();
    let marker = |out: &mut Vec<u8>, c: u8, label: &str| {
        if out.last().is_some_and(|&b| b != b'\n') {
            out.push(b'\n');
        }
        out.extend(std::iter::repeat_n(c, len));
        if !label.is_empty() {
            out.push(b' ');
            out.extend_from_slice(label.as_bytes());
        }
        out.push(b'\n');
    };
    for s in segments {
        match s {
            Segment::Text(t) => out.extend_from_slice(t),
            Segment::Conflict {
                current, before, ..
            } => {
                marker(&mut out, b'<', "current");
                out.extend_from_slice(current);
                marker(&mut out, b'=', "");
                out.extend_from_slice(before);
                marker(&mut out, b'>', other);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_elsewhere_is_kept_and_the_reverted_one_taken_out() {
        let before = b"a\nb\nc\nd\ne\n";
        let reverted = b"a\nB\nc\nd\ne\n"; // the turn changed b
        let current = b"a\nB\nc\nd\nE\n"; // a later turn changed e
        assert_eq!(
            revert_text(reverted, current, before),
            Merged::Clean(b"a\nb\nc\nd\nE\n".to_vec())
        );
    }

    #[test]
    fn an_overlapping_change_is_a_conflict_read_back_into_its_three_sides() {
        let before = b"a\nb\nc\n";
        let reverted = b"a\nB\nc\n";
        let current = b"a\nBB\nc\n";
        let Merged::Conflicts(segments) = revert_text(reverted, current, before) else {
            panic!("expected a conflict");
        };
        assert_eq!(
            segments,
            vec![
                Segment::Text(b"a\n".to_vec()),
                Segment::Conflict {
                    current: b"BB\n".to_vec(),
                    reverted: b"B\n".to_vec(),
                    before: b"b\n".to_vec(),
                },
                Segment::Text(b"c\n".to_vec()),
            ]
        );
        assert_eq!(
            String::from_utf8(with_markers(&segments, "revert of e1")).unwrap(),
            "a\n<<<<<<< current\nBB\n=======\nb\n>>>>>>> revert of e1\nc\n"
        );
    }

    #[test]
    fn marker_lines_in_the_file_are_not_mistaken_for_markers() {
        let before = b"<<<<<<< ours\nx\n=======\n";
        let reverted = b"<<<<<<< ours\ny\n=======\n";
        let current = b"<<<<<<< ours\nz\n=======\n";
        let Merged::Conflicts(segments) = revert_text(reverted, current, before) else {
            panic!("expected a conflict");
        };
        assert_eq!(
            segments,
            vec![
                Segment::Text(b"<<<<<<< ours\n".to_vec()),
                Segment::Conflict {
                    current: b"z\n".to_vec(),
                    reverted: b"y\n".to_vec(),
                    before: b"x\n".to_vec(),
                },
                Segment::Text(b"=======\n".to_vec()),
            ]
        );
        // Written markers are longer than the file's own marker-like lines.
        let written = String::from_utf8(with_markers(&segments, "r")).unwrap();
        assert!(written.contains("\n<<<<<<<< current\n"), "{written}");
    }

    #[test]
    fn a_last_line_without_newline_still_gets_markers_at_line_starts() {
        let Merged::Conflicts(segments) = revert_text(b"a\nB", b"a\nC", b"a\nb") else {
            panic!("expected a conflict");
        };
        let written = String::from_utf8(with_markers(&segments, "r")).unwrap();
        for line in written.lines().filter(|l| l.starts_with(['<', '=', '>'])) {
            assert!(
                ["<<<<<<< current", "=======", ">>>>>>> r"].contains(&line),
                "{written:?}"
            );
        }
    }
}
