/**
 * JSON may spell an unpaired UTF-16 surrogate (`"\ud800"`), which PostgreSQL cannot hold: its text
 * turns one into U+FFFD and its json/jsonb input refuses the escape (22P02). Input parsed with this
 * reviver has every such surrogate, in values and keys, replaced by U+FFFD up front, so what is
 * stored, echoed and compared is the same text.
 */
type WellFormedString = string & { isWellFormed(): boolean; toWellFormed(): string };

export function wellFormedReviver(_key: string, value: unknown): unknown {
  if (typeof value === 'string') return (value as WellFormedString).toWellFormed();
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const keys = Object.keys(value);
  if (keys.every((k) => (k as WellFormedString).isWellFormed())) return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [(k as WellFormedString).toWellFormed(), v]),
  );
}
