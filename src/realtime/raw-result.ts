/**
 * A live-query result as the engine's JSON text, handed to every subscriber of its variable set
 * without being parsed and serialized again per subscriber: the WebSocket server splices the text
 * into graphql-ws' `next` message (ws-server.ts), the event streams into their `data` (eventData).
 */
export class RawResult {
  /** The text's UTF-8 bytes, made once: every WebSocket subscriber is sent this one Buffer. */
  readonly bytes: Buffer;
  constructor(text: string) {
    this.bytes = Buffer.from(text);
  }
  private decoded: string | undefined;
  /** The text again, decoded once when first asked (the event streams write it; the sockets write `bytes`). */
  get text(): string {
    this.decoded ??= this.bytes.toString();
    return this.decoded;
  }
}

/** What `JSON.stringify` writes for RAW_MARKER (a string no result is: results are objects). */
export const RAW_MARKER = '\u0000strata-raw-result';
const WRITTEN_MARKER = JSON.stringify(RAW_MARKER);

/**
 * A JSON.stringify replacer and the split that follows it: `replacer` swaps a RawResult for the
 * marker and keeps it; `split` answers the message's text before and after the marker (the last
 * one: graphql-ws writes `payload` after the client's `id`) and the result whose bytes go between.
 * Both run in one synchronous step (stringify, then send), so the kept result is always the
 * message's own.
 */
export function rawSplicer() {
  let kept: RawResult | undefined;
  return {
    replacer(_key: string, value: unknown): unknown {
      if (value instanceof RawResult) {
        kept = value;
        return RAW_MARKER;
      }
      return value;
    },
    split(data: string): { before: string; result: RawResult; after: string } | undefined {
      const result = kept;
      kept = undefined;
      if (result === undefined) return undefined;
      const at = data.lastIndexOf(WRITTEN_MARKER);
      if (at < 0) return undefined;
      return { before: data.slice(0, at), result, after: data.slice(at + WRITTEN_MARKER.length) };
    },
  };
}

/** The JSON text of an event stream's `data` (one line: a text with line breaks is re-serialized). */
export function eventData(value: unknown): string {
  if (value instanceof RawResult)
    return /[\r\n]/.test(value.text) ? JSON.stringify(JSON.parse(value.text)) : value.text;
  return JSON.stringify(value);
}
