/** Live results spliced as the engine's JSON text (src/realtime/raw-result.ts). */
import { describe, expect, it } from 'vitest';
import { eventData, RAW_MARKER, RawResult, rawSplicer } from '../../src/realtime/raw-result.js';

describe('raw results', () => {
  it('a next message carries the bytes as they are, also when the client chose the marker as its id', () => {
    const raw = rawSplicer();
    const text = '{"data":{"noteCollection":{"edges":[{"node":{"body":"a \\"quoted\\" body ü"}}]}}}';
    const result = new RawResult(text);
    for (const id of ['1', RAW_MARKER]) {
      const parts = raw.split(JSON.stringify({ id, type: 'next', payload: result }, raw.replacer));
      expect(parts?.result).toBe(result);
      const data = parts ? parts.before + parts.result.bytes.toString() + parts.after : '';
      expect(JSON.parse(data)).toEqual({ id, type: 'next', payload: JSON.parse(text) });
    }
    expect(result.text).toBe(text);
    // A message without a raw result is not split (nothing kept from before).
    const plain = JSON.stringify({ id: RAW_MARKER, type: 'complete' }, raw.replacer);
    expect(raw.split(plain)).toBeUndefined();
  });

  it('an event stream gets one line of data, a text with line breaks re-serialized', () => {
    expect(eventData(new RawResult('{"data":{"x":1}}'))).toBe('{"data":{"x":1}}');
    expect(eventData(new RawResult('{"data":\n{"j": {"a" :\r\n 1}}}'))).toBe('{"data":{"j":{"a":1}}}');
    expect(eventData({ errors: [{ message: 'x' }] })).toBe('{"errors":[{"message":"x"}]}');
  });
});
