/**
 * The consumer matrix: which app is built on which major lines, and how its package.json and
 * tsconfig.json look. Only the major line that defines an app is pinned; every other package of the
 * README's install command (and the app's dev tools) resolves to its newest release.
 */
import { readFileSync } from 'node:fs';

/** The README's install command, as the issue states it; used only when the README has none yet. */
export const FALLBACK_INSTALL_PACKAGES = [
  'nest-agent-runtime',
  '@nestjs/common',
  '@nestjs/core',
  '@nestjs/platform-express',
  '@nestjs/terminus',
  '@nestjs/event-emitter',
  '@nestjs/typeorm',
  'typeorm',
  'pg',
  'reflect-metadata',
  'rxjs',
];

/** The app's own dev tools, installed with `npm install -D` after the README's command. */
export const DEV_TOOLS = ['typescript', '@types/node'];

/** Compiler options of every app: strict, and the package's declarations checked too. */
const COMPILER_OPTIONS = {
  module: 'nodenext',
  moduleResolution: 'nodenext',
  target: 'ES2022',
  lib: ['ES2022'],
  types: ['node'],
  strict: true,
  skipLibCheck: false,
  esModuleInterop: true,
  experimentalDecorators: true,
  emitDecoratorMetadata: true,
  forceConsistentCasingInFileNames: true,
  rootDir: 'src',
  outDir: 'dist',
};

/**
 * The two apps. `ranges` pins a package of the install command to the app's major line; `type` is
 * the package.json module type, which decides whether `module: nodenext` emits ESM or CommonJS.
 */
export const APPS = [
  {
    id: 'a',
    title: 'newest Nest 12, @nestjs/typeorm 12, typeorm 1.x, ESM',
    type: 'module',
    ranges: {
      '@nestjs/common': '^12',
      '@nestjs/core': '^12',
      '@nestjs/platform-express': '^12',
      '@nestjs/terminus': '^12',
      '@nestjs/event-emitter': '^12',
      '@nestjs/typeorm': '^12',
      typeorm: '^1',
    },
  },
  {
    id: 'b',
    title: 'Nest 11, terminus 11, event-emitter 3, @nestjs/typeorm 11, typeorm 0.3, CommonJS',
    type: 'commonjs',
    ranges: {
      '@nestjs/common': '^11',
      '@nestjs/core': '^11',
      '@nestjs/platform-express': '^11',
      '@nestjs/terminus': '^11',
      '@nestjs/event-emitter': '^3',
      '@nestjs/typeorm': '^11',
      typeorm: '^0.3',
    },
  },
];

/**
 * The package names of the README's `npm install nest-agent-runtime …` command, or `null` when the
 * README has no such command.
 */
export function readmeInstallPackages(readmePath) {
  const match = /^\s*(?:\$ )?npm (?:install|i) (nest-agent-runtime(?: +[@a-z0-9/._-]+)+)\s*(?:#.*)?$/m.exec(readFileSync(readmePath, 'utf8'));
  return match ? match[1].trim().split(/ +/) : null;
}

/** The arguments of the app's `npm install`: the README's packages, the tarball in place of the package, the app's ranges. */
export function installArguments(app, packages, tarball) {
  return packages.map((name) => (name === 'nest-agent-runtime' ? tarball : app.ranges[name] ? `${name}@${app.ranges[name]}` : name));
}

/** package.json of a fresh app (npm install fills in the dependencies). */
export function packageJson(app) {
  return { name: `consumer-${app.id}`, version: '0.0.0', private: true, type: app.type, scripts: { build: 'tsc -p tsconfig.json', start: 'node dist/main.js' } };
}

/** tsconfig.json of every app. */
export function tsconfigJson() {
  return { compilerOptions: COMPILER_OPTIONS, include: ['src'] };
}
