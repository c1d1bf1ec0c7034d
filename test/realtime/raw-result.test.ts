/** Live results spliced as the engine's JSON text (src/realtime/raw-result.ts). */
import { describe, expect, it } from 'vitest';
import { eventData, RAW_MARKER, RawResult, rawSplicer } from '../../src/realtime/raw-result.js';

describe('raw results', () => {
  it('a next message carries the text as it is, also when the client chose the marker as its id', () => {
    const raw = rawSplicer();
    const text = '{"data":{"noteCollection":{"edges":[{"node":{"body":"a \\"quoted\\" body"}}]}}}';
    for (const id of ['1', RAW_MARKER]) {
      const data = raw.splice(
        JSON.stringify({ id, type: 'next', payload: new RawResult(text) }, raw.replacer),
      );
      expect(JSON.parse(data)).toEqual({ id, type: 'next', payload: JSON.parse(text) });
    }
    // A message without a raw result passes unchanged (nothing kept from before).
    const plain = JSON.stringify({ id: RAW_MARKER, type: 'complete' }, raw.replacer);
    expect(raw.splice(plain)).toBe(plain);
  });

  it('an event stream gets one line of data, a text with line breaks re-serialized', () => {
    expect(eventData(new RawResult('{"data":{"x":1}}'))).toBe('{"data":{"x":1}}');
    expect(eventData(new RawResult('{"data":\n{"j": {"a" :\r\n 1}}}'))).toBe('{"data":{"j":{"a":1}}}');
    expect(eventData({ errors: [{ message: 'x' }] })).toBe('{"errors":[{"message":"x"}]}');
  });
});
