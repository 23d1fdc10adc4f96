import assert from "node:assert/strict";
import { test } from "node:test";
import { encodeLine, LineDecoder } from "../src/index.js";

function feedBytewise(dec: LineDecoder, data: Buffer): string[] {
  const out: string[] = [];
  for (let i = 0; i < data.length; i++) out.push(...dec.push(data.subarray(i, i + 1)));
  return out;
}

test("splits on \\n only: U+2028, U+2029 and a lone \\r stay inside the line", () => {
  const dec = new LineDecoder();
  const lines = dec.push(Buffer.from('{"a":"x\u2028y\u2029z"}\n{"b":1}\nlone\rcr\n', "utf8"));
  assert.deepEqual(lines, ['{"a":"x\u2028y\u2029z"}', '{"b":1}', "lone\rcr"]);
  assert.deepEqual(JSON.parse(lines[0] ?? ""), { a: "x\u2028y\u2029z" });
});

test("strips exactly one trailing \\r", () => {
  const dec = new LineDecoder();
  assert.deepEqual(dec.push("a\r\nb\r\r\n\r\n"), ["a", "b\r", ""]);
});

test("multi-byte UTF-8 split across chunks at every byte", () => {
  const text = '{"s":"日本語 😀 ü \u2028 end"}';
  const data = Buffer.from(text + "\n" + text + "\n", "utf8");
  // every possible split point
  for (let cut = 0; cut <= data.length; cut++) {
    const dec = new LineDecoder();
    const lines = [...dec.push(data.subarray(0, cut)), ...dec.push(data.subarray(cut))];
    assert.deepEqual(lines, [text, text], `split at ${cut}`);
  }
  assert.deepEqual(feedBytewise(new LineDecoder(), data), [text, text]);
});

test("a final line without \\n is delivered at end()", () => {
  const dec = new LineDecoder();
  assert.deepEqual(dec.push("one\ntw"), ["one"]);
  assert.equal(dec.bufferedBytes, 2);
  assert.deepEqual(dec.push("o"), []);
  assert.deepEqual(dec.end(), ["two"]);
  assert.deepEqual(dec.end(), []);
});

test("large lines assembled from many chunks", () => {
  const big = "x".repeat(3_000_000) + "é".repeat(500_000);
  const data = Buffer.from(JSON.stringify({ big }) + "\n", "utf8");
  const dec = new LineDecoder();
  const out: string[] = [];
  for (let i = 0; i < data.length; i += 65_537) out.push(...dec.push(data.subarray(i, i + 65_537)));
  assert.equal(out.length, 1);
  assert.equal((JSON.parse(out[0] ?? "") as { big: string }).big, big);
});

test("chunk memory reuse does not corrupt buffered data", () => {
  const dec = new LineDecoder();
  const chunk = Buffer.from("abc");
  assert.deepEqual(dec.push(chunk), []);
  chunk.write("XYZ");
  assert.deepEqual(dec.push(Buffer.from("\n")), ["abc"]);
});

test("encodeLine writes compact JSON and one \\n, keeping U+2028 raw", () => {
  const line = encodeLine({ a: "x\u2028y\nz" });
  assert.equal(line, '{"a":"x\u2028y\\nz"}\n');
  assert.equal(line.indexOf("\n"), line.length - 1);
});
