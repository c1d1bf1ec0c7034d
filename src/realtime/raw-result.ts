/**
 * A live-query result as the engine's JSON text, handed to every subscriber of its variable set
 * without being parsed and serialized again per subscriber: the WebSocket server splices the text
 * into graphql-ws' `next` message (ws-server.ts), the event streams into their `data` (eventData).
 */
export class RawResult {
  constructor(readonly text: string) {}
}

/** What `JSON.stringify` writes for RAW_MARKER (a string no result is: results are objects). */
export const RAW_MARKER = '\u0000strata-raw-result';
const WRITTEN_MARKER = JSON.stringify(RAW_MARKER);

/**
 * A JSON.stringify replacer and the splice that follows it: `replacer` swaps a RawResult for the
 * marker and keeps its text; `splice` puts that text where the marker was written (the last one:
 * graphql-ws writes `payload` after the client's `id`). Both run in one synchronous step (stringify,
 * then send), so the kept text is always the message's own.
 */
export function rawSplicer() {
  let kept: string | undefined;
  return {
    replacer(_key: string, value: unknown): unknown {
      if (value instanceof RawResult) {
        kept = value.text;
        return RAW_MARKER;
      }
      return value;
    },
    splice(data: string): string {
      const text = kept;
      kept = undefined;
      if (text === undefined) return data;
      const at = data.lastIndexOf(WRITTEN_MARKER);
      return at < 0 ? data : data.slice(0, at) + text + data.slice(at + WRITTEN_MARKER.length);
    },
  };
}

/** The JSON text of an event stream's `data` (one line: a text with line breaks is re-serialized). */
export function eventData(value: unknown): string {
  if (value instanceof RawResult)
    return /[\r\n]/.test(value.text) ? JSON.stringify(JSON.parse(value.text)) : value.text;
  return JSON.stringify(value);
}
