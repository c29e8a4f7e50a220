import { randomId } from '../../shared/ids/random-id';

/** The one minting of request refs, local and cluster alike: `request-` + 24 base64url characters. */
export function newRequestRef(): string {
  return randomId('request-');
}

/** The one minting of permit ids, local and cluster alike: `permit-` + 24 base64url characters. */
export function newPermitId(): string {
  return randomId('permit-');
}
