/** A read-only value with a copy button; `secret` values stay hidden until revealed. */
import { useState } from 'react';

export function CopyValue({
  label,
  value,
  secret = false,
}: {
  label: string;
  value: string;
  secret?: boolean;
}) {
  const [shown, setShown] = useState(!secret);
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    await navigator.clipboard.writeText(value);
    setCopied(true);
    setTimeout(() => setCopied(false), 1500);
  };
  return (
    <div className="copy-value" data-label={label}>
      <span className="copy-label">{label}</span>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling value must be reachable by keyboard */}
      <code className="copy-text" tabIndex={0}>
        {shown ? value : '•'.repeat(24)}
      </code>
      {!shown && (
        <button type="button" onClick={() => setShown(true)}>
          Reveal
        </button>
      )}
      <button type="button" onClick={() => void copy()} aria-label={`Copy ${label}`}>
        Copy
      </button>
      <span className="muted copied" aria-live="polite">
        {copied ? 'Copied' : ''}
      </span>
    </div>
  );
}
