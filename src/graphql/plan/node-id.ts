/** Decoding of global node ids: base64 of the jsonb text ["schema", "table", pk...]. */
import { fail } from './errors.js';

export function decodeNodeId(id: string): { schema: string; table: string; values: unknown[] } {
  if (id === '') fail('Invalid value passed to nodeId argument. Error 4');
  let text: string;
  try {
    text = Buffer.from(id, 'base64').toString('utf8');
  } catch {
    return fail('Invalid value passed to nodeId argument. Error 1');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return fail('Invalid value passed to nodeId argument. Error 2');
  }
  if (!Array.isArray(parsed)) fail('Invalid value passed to nodeId argument. Error 3');
  const arr = parsed as unknown[];
  if (arr.length < 3) fail('Invalid value passed to nodeId argument. Error 5');
  if (typeof arr[0] !== 'string') fail('Invalid value passed to nodeId argument. Error 6');
  if (typeof arr[1] !== 'string') fail('Invalid value passed to nodeId argument. Error 7');
  return { schema: arr[0] as string, table: arr[1] as string, values: arr.slice(2) };
}
