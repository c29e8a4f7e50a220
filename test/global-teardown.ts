export default async function globalTeardown(): Promise<void> {
  await globalThis.__agentRuntimeTestDatabase?.stop();
  globalThis.__agentRuntimeTestDatabase = undefined;
}
