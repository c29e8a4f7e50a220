import { canonicalJson } from './canonical-json';
import { hasEscapedNul } from './escaped-nul';

/**
 * The canonical JSON text of `value` when the package's stores can keep it, else `undefined`: JSON
 * cannot hold it faithfully (a lone surrogate, a non-plain object, a number JSON has no form for),
 * or a string or key holds U+0000, which Postgres `jsonb` refuses (so the memory stores refuse it
 * too, and both agree). The one content rule of the session stores, the Runner and the HTTP routes.
 */
export function storableJsonText(value: unknown): string | undefined {
  let text: string;
  try {
    text = canonicalJson(value);
  } catch {
    return undefined;
  }
  return hasEscapedNul(text) ? undefined : text;
}
