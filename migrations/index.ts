/**
 * Every TypeORM migration of the package, in order. Listed explicitly (not globbed) so the same
 * list serves the compiled CLI, the reference app and the Jest global setup.
 */
export const AGENT_RUNTIME_MIGRATIONS: Function[] = [];
