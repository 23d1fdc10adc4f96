/**
 * Strict JSONL framing (pi's): records end at `\n` (0x0A) only. One trailing `\r` is
 * stripped; U+2028, U+2029, lone `\r` and every other character are ordinary content.
 * Bytes are buffered until a full line has arrived and each line is decoded as UTF-8 on
 * its own, so a multi-byte character split across chunks is never mangled.
 *
 * (Node's `readline` also breaks lines at `\r`, U+2028 and U+2029 and is therefore not
 * safe for this protocol.)
 */
export class LineDecoder {
  private chunks: Buffer[] = [];
  private pending = 0;

  /** Feed a chunk; returns the complete lines it finished (without terminators). */
  push(chunk: Buffer | Uint8Array | string): string[] {
    let buf =
      typeof chunk === "string"
        ? Buffer.from(chunk, "utf8")
        : Buffer.isBuffer(chunk)
          ? chunk
          : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const lines: string[] = [];
    let nl = buf.indexOf(0x0a);
    while (nl !== -1) {
      const head = buf.subarray(0, nl);
      let line: Buffer;
      if (this.pending === 0) {
        line = head;
      } else {
        this.chunks.push(head);
        line = Buffer.concat(this.chunks, this.pending + head.length);
        this.chunks = [];
        this.pending = 0;
      }
      lines.push(decodeLine(line));
      buf = buf.subarray(nl + 1);
      nl = buf.indexOf(0x0a);
    }
    if (buf.length > 0) {
      // Copy: the caller may reuse the chunk's memory.
      this.chunks.push(Buffer.from(buf));
      this.pending += buf.length;
    }
    return lines;
  }

  /** At EOF: the final line if it lacked a `\n` (it is still a record), else nothing. */
  end(): string[] {
    if (this.pending === 0) return [];
    const line = Buffer.concat(this.chunks, this.pending);
    this.chunks = [];
    this.pending = 0;
    return [decodeLine(line)];
  }

  /** Bytes buffered for a line that has not ended yet. */
  get bufferedBytes(): number {
    return this.pending;
  }
}

function decodeLine(line: Buffer): string {
  const end = line.length > 0 && line[line.length - 1] === 0x0d ? line.length - 1 : line.length;
  return line.toString("utf8", 0, end);
}

/** Serialize one message as a strict-JSONL record (compact JSON and one `\n`). */
export function encodeLine(message: unknown): string {
  // JSON.stringify never emits a raw `\n` (it escapes control characters); U+2028/U+2029
  // stay raw, which the sidecar's strict framing accepts.
  return JSON.stringify(message) + "\n";
}
