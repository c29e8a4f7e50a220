/** Event names emitted by the package's components. */
export const TelemetryEvents = Object.freeze({
  admissionDecision: 'agent_runtime.admission.decision',
} as const);
