import { randomId } from '../shared/ids/random-id';

/** The one minting of session ids (the Runner, the run registry and both session services): `ses-` + 24 base64url characters, a token id. */
export function newSessionId(): string {
  return randomId('ses-');
}
