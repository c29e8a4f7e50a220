import type { AdmissionController } from './admission-controller';
import type { AdmissionRequestState } from './admission.constants';

/** Releases the request's permit once, then aborts its owner; later calls do nothing. */
export function releaseOnce(controller: AdmissionController, state: AdmissionRequestState): void {
  if (state.done) return;
  state.done = true;
  controller.release(state.permit);
  state.owner.abort();
}
