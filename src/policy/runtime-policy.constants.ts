import type { DataSource } from 'typeorm';
import type { RuntimePolicy } from './runtime-policy';
import type { RuntimePolicySpec } from './runtime-policy-compiler';
import type { AuditSink } from './audit-log/audit-sink';

/** Injection token of the validated {@link RuntimePolicyModuleOptions}. */
export const RUNTIME_POLICY_OPTIONS = Symbol('RUNTIME_POLICY_OPTIONS');

/** Metadata keys of `@AgentEndpoint()` and `@ToolEndpoint()`. */
export const AGENT_ENDPOINT = 'agent_runtime:policy_agent_endpoint';
export const TOOL_ENDPOINT = 'agent_runtime:policy_tool_endpoint';

/** Which decisions reach the audit sink: every denial, or every decision. */
export type AuditDecisions = 'deny' | 'all';

/** Options of `RuntimePolicyModule.forRoot` (spec 02 §8). Unknown keys are refused. */
export interface RuntimePolicyModuleOptions {
  /** A policy spec (compiled at start-up) or a compiled `RuntimePolicy`. */
  policy: RuntimePolicySpec | RuntimePolicy;
  /**
   * Where decisions are stored: `'postgres'` (a `PostgresAuditLog` on the TypeORM DataSource, schema
   * validated at start-up) or an object with a `record` function. @default none (one start-up warning)
   */
  auditLog?: 'postgres' | AuditSink;
  /** Which decisions go to the sink; denials always. @default 'deny' */
  auditDecisions?: AuditDecisions;
  /** Bound of each `record` call, integer 1..60000 ms. @default 5000 */
  auditTimeoutMs?: number;
  /** The app's DataSource for `'postgres'`, for an app without `@nestjs/typeorm`. @default the `@nestjs/typeorm` DataSource */
  dataSource?: DataSource;
  /** Name of the `@nestjs/typeorm` DataSource for `'postgres'`. @default the default DataSource */
  dataSourceName?: string;
}

/** Reads the request into the value a check measures; a throw counts as an unmeasurable value. */
export type RequestExtractor = (request: any) => unknown;

/** What `@AgentEndpoint()` stores. */
export interface AgentEndpointOptions {
  agent: string;
  /** @default the parsed body, `''` when there is none */
  input?: RequestExtractor;
}

/** What `@ToolEndpoint()` stores. */
export interface ToolEndpointOptions {
  tool: string;
  /** @default the parsed body, `{}` when there is none */
  args?: RequestExtractor;
}
