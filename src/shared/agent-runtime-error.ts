/** One flat record inside a details list, e.g. a schema mismatch. */
export type ErrorDetailRecord = Readonly<Record<string, string | number | boolean | null>>;

/**
 * A record of non-sensitive facts attached to an error: counts, limits, field names, codes, and
 * lists of flat records (which the message shows only as their count).
 */
export type ErrorDetails = Readonly<
  Record<string, string | number | boolean | null | readonly string[] | readonly ErrorDetailRecord[]>
>;

/**
 * Base of every module's error class: a stable `code` from the module's union and optional
 * `details`. The message is derived from the code alone, so it can never carry user content.
 */
export abstract class AgentRuntimeError<Code extends string> extends Error {
  readonly code: Code;
  readonly details?: ErrorDetails;

  protected constructor(name: string, code: Code, details?: ErrorDetails) {
    super(details ? `${code} ${JSON.stringify(details, countRecordLists)}` : code);
    this.name = name;
    this.code = code;
    if (details !== undefined) this.details = Object.freeze({ ...details });
  }
}

function countRecordLists(_key: string, value: unknown): unknown {
  return Array.isArray(value) && value.some((item) => typeof item === 'object' && item !== null) ? value.length : value;
}
