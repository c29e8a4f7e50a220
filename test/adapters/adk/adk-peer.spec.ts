import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

const ROOT_DIR = path.resolve(__dirname, '../../..');
const ENTRY = path.join(ROOT_DIR, 'dist/src/adapters/adk/index.js');
const CORE = path.join(ROOT_DIR, 'dist/src/index.js');

/**
 * Runs `script` in a plain Node process whose module loader treats `@google/adk` as `mode` says
 * (absent, or present in another version), recording every attempt to load it.
 */
function runWithPeer(mode: 'absent' | 'v2.1.0', script: string): { readonly status: number | null; readonly output: Record<string, unknown>; readonly stderr: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'adk-peer-'));
  const preload = path.join(dir, 'peer.js');
  writeFileSync(
    preload,
    `const Module = require('node:module');
globalThis.adkAttempts = [];
const load = Module._load;
Module._load = function (request, parent, isMain) {
  if (request === '@google/adk' || request.startsWith('@google/adk/')) {
    globalThis.adkAttempts.push(request);
    if (${JSON.stringify(mode)} === 'absent') throw Object.assign(new Error("Cannot find module '" + request + "'"), { code: 'MODULE_NOT_FOUND' });
    if (request === '@google/adk/package.json') return { version: '2.1.0' };
  }
  return load.apply(this, arguments);
};`,
  );
  const child = spawnSync(process.execPath, ['-r', preload, '-e', script], { cwd: ROOT_DIR, encoding: 'utf8', timeout: 60_000 });
  const line = child.stdout.trim().split('\n').at(-1) ?? '{}';
  return { status: child.status, output: JSON.parse(line) as Record<string, unknown>, stderr: child.stderr };
}

const ATTEMPTS = `
const adk = require(${JSON.stringify(ENTRY)});
const core = require(${JSON.stringify(CORE)});
const loaded = [...globalThis.adkAttempts];
const codes = {};
const attempt = (name, fn) => { try { fn(); codes[name] = 'no error'; } catch (error) { codes[name] = error.name + ':' + error.code + ':' + JSON.stringify(error.details ?? null); } };
attempt('facade', () => new adk.AdkRunnerFacade({ appName: 'a', agent: {}, sessionService: {} }));
attempt('plugin', () => new adk.AdkSafetyPlugin({ runtimePolicy: {} }));
attempt('sessions', () => new adk.BudgetGuardSessionService({}, { runtimePolicy: {} }));
attempt('guards', () => adk.installAgentGuards({}, { runtimePolicy: {} }));
console.log(JSON.stringify({ exports: Object.keys(adk).sort(), coreLoaded: typeof core.Runner, loaded, codes, isAdapterError: typeof adk.AdkAdapterError }));
`;

describe('The @google/adk peer is required lazily (spec 03 §11)', () => {
  it('without the peer the entry point loads, and each part fails with adk_peer_missing when used', () => {
    const { status, output, stderr } = runWithPeer('absent', ATTEMPTS);

    expect({ status, stderr }).toEqual({ status: 0, stderr: '' });
    expect(output.exports).toEqual(['ADK_SAFETY_PLUGIN_NAME', 'AdkAdapterError', 'AdkRunnerFacade', 'AdkSafetyPlugin', 'BudgetGuardSessionService', 'installAgentGuards']);
    expect(output.coreLoaded).toBe('function');
    // neither the adapter entry point nor the core entry point asked for ADK while loading
    expect(output.loaded).toEqual([]);
    const missing = 'AdkAdapterError:adk_peer_missing:null';
    expect(output.codes).toEqual({ facade: missing, plugin: missing, sessions: missing, guards: missing });
  });

  it('a peer outside ~2.0.0 is adk_peer_unsupported {version}', () => {
    const { status, output } = runWithPeer('v2.1.0', ATTEMPTS);

    expect(status).toBe(0);
    const unsupported = 'AdkAdapterError:adk_peer_unsupported:{"version":"2.1.0"}';
    expect(output.codes).toEqual({ facade: unsupported, plugin: unsupported, sessions: unsupported, guards: unsupported });
  });
});
