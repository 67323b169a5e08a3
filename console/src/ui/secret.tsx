import { useState } from 'react';

/** A secret the API shows only once (a key, a node token, a webhook secret), with a copy button. */
export function ShownOnce({ label, value }: { label: string; value: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    await navigator.clipboard.writeText(value);
    setCopied(true);
  };
  return (
    <div className="shown-once">
      <p>
        <strong>{label}</strong> — shown only this once. Copy it now.
      </p>
      <div className="copy-row">
        <code aria-label={label}>{value}</code>
        <button type="button" onClick={() => void copy().catch(() => setCopied(false))}>
          {copied ? 'Copied' : 'Copy'}
        </button>
      </div>
    </div>
  );
}
