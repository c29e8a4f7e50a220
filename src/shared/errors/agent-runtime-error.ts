/** One flat record inside a details list, e.g. a schema mismatch. */
export type ErrorDetailRecord = Readonly<Record<string, string | number | boolean | null>>;

/**
 * A record of non-sensitive facts attached to an error: counts, limits (a range as `[min, max]`),
 * field names, codes, and lists of flat records (which the message shows only as their count).
 */
export type ErrorDetails = Readonly<
  Record<string, string | number | boolean | null | readonly string[] | readonly number[] | readonly ErrorDetailRecord[]>
>;

/**
 * Base of every module's error class: a stable `code` from the module's union and optional
 * `details`. The message is derived from the code alone, so it can never carry user content.
 */
export abstract class AgentRuntimeError<Code extends string> extends Error {
  readonly #brand = true;
  readonly code: Code;
  readonly details?: ErrorDetails;

  /**
   * True for an error built by this package, of the class `errorClass` when given. A brand check
   * (a private field), so no Proxy trap or getter of a look-alike runs before it answers.
   */
  static isAgentRuntimeError<E extends AgentRuntimeError<string>>(value: unknown, errorClass?: abstract new (...args: never[]) => E): value is E {
    if (typeof value !== 'object' || value === null || !(#brand in value)) return false;
    return errorClass === undefined || value instanceof errorClass;
  }

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
