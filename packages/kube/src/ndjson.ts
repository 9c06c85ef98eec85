/**
 * Cuts a byte stream into lines. Chunk boundaries fall anywhere — inside a line, inside a
 * multi-byte character — so bytes are decoded in streaming mode and the tail is kept.
 */
export class LineSplitter {
  private readonly decoder = new TextDecoder();
  private tail = "";

  constructor(private readonly maxLineChars = 16 * 1024 * 1024) {}

  /** Complete lines in this chunk (without "\n" / "\r\n"); throws when one outgrows maxLineChars. */
  push(chunk: Uint8Array): string[] {
    const text = this.tail + this.decoder.decode(chunk, { stream: true });
    const parts = text.split("\n");
    this.tail = parts.pop() ?? "";
    if (this.tail.length > this.maxLineChars) {
      throw new Error(`a line grew past ${this.maxLineChars} characters without a newline`);
    }
    return parts.map(stripCR);
  }

  /** Whatever followed the last newline when the stream ended ("" if nothing). */
  finish(): string {
    const rest = stripCR(this.tail + this.decoder.decode());
    this.tail = "";
    return rest;
  }
}

const stripCR = (line: string) => (line.endsWith("\r") ? line.slice(0, -1) : line);
