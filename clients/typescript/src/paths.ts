// Project paths whose file names are not UTF-8 travel as strings in which each byte of an
// invalid sequence is the private-use character U+F700 + byte (U+F780–U+F7FF); a name that
// really holds such a character has each byte of its UTF-8 encoding written that way
// (docs/protocol.md, "File names that are not UTF-8").

const isEscape = (cp: number): boolean => cp >= 0xf780 && cp <= 0xf7ff;

/** The bytes a project path names on disk. */
export function decodePath(path: string): Uint8Array {
  const out: number[] = [];
  const enc = new TextEncoder();
  for (const ch of path) {
    const cp = ch.codePointAt(0) ?? 0;
    if (isEscape(cp)) out.push(cp - 0xf700);
    else out.push(...enc.encode(ch));
  }
  return Uint8Array.from(out);
}

/** The project-path string for a file name given as bytes (the inverse of decodePath). */
export function encodePath(bytes: Uint8Array): string {
  let out = "";
  let i = 0;
  const dec = new TextDecoder("utf-8", { fatal: true });
  while (i < bytes.length) {
    // The longest valid UTF-8 character starting at i (1 to 4 bytes), else one raw byte.
    let taken = 0;
    for (let len = 1; len <= 4 && i + len <= bytes.length; len++) {
      try {
        const s = dec.decode(bytes.subarray(i, i + len));
        if ([...s].length === 1) {
          const cp = s.codePointAt(0) ?? 0;
          if (isEscape(cp)) {
            for (const b of bytes.subarray(i, i + len)) out += String.fromCodePoint(0xf700 + b);
          } else {
            out += s;
          }
          taken = len;
          break;
        }
      } catch {
        // not a whole character yet
      }
    }
    if (taken === 0) {
      out += String.fromCodePoint(0xf700 + (bytes[i] ?? 0));
      taken = 1;
    }
    i += taken;
  }
  return out;
}
