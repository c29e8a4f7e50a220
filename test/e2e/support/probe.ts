import { Injectable } from '@nestjs/common';
import { PassThrough } from 'node:stream';
import { Subject, type Observable } from 'rxjs';
import type { Permit } from '../../../src/admission/permit';

interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
  reject(reason: unknown): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (reason: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

/** What a held handler answers with. */
export interface HeldResult {
  key: string;
  agent_id: string | null;
  permit_id_ok: boolean;
}

/**
 * Test double of "agent work": handlers call `hold(key)` and stay inside until the test calls
 * `finish(key)` or `fail(key, error)`. It records the order handlers start, which handlers saw their
 * `@AdmissionSignal()` abort (and why), and which have settled.
 */
@Injectable()
export class Probe {
  /** Keys in the order their handlers started. */
  readonly started: string[] = [];
  /** Keys whose handler finished (resolved or threw). */
  readonly settled: string[] = [];
  /** Abort reasons of the handlers' admission signals, by key. */
  readonly aborted = new Map<string, unknown>();
  /** The permits handed to `hold`, by key. */
  readonly permits = new Map<string, Permit>();
  /** Free-form notes (e.g. what a later guard saw). */
  readonly notes: Array<Record<string, unknown>> = [];

  private readonly gates = new Map<string, Deferred<unknown>>();
  private readonly subjects = new Map<string, Subject<unknown>>();
  private readonly streams = new Map<string, PassThrough>();

  async hold(key: string, signal?: AbortSignal, permit?: Permit): Promise<HeldResult> {
    this.started.push(key);
    if (permit) this.permits.set(key, permit);
    signal?.addEventListener('abort', () => this.aborted.set(key, signal.reason), { once: true });
    try {
      await this.gate(key).promise;
      return { key, agent_id: permit?.agentId ?? null, permit_id_ok: permit ? /^permit-[A-Za-z0-9_-]{24}$/.test(permit.id) : false };
    } finally {
      this.settled.push(key);
    }
  }

  /** Waits at gate `key` without counting as a started handler (for guards and streams). */
  pass(key: string): Promise<unknown> {
    return this.gate(key).promise;
  }

  /** An observable the test completes (`complete`) or errors (`error`). */
  stream(key: string): Observable<unknown> {
    this.started.push(key);
    const subject = new Subject<unknown>();
    this.subjects.set(key, subject);
    return subject.asObservable();
  }

  /** A byte stream the test writes to (`write`) and ends (`end`). */
  readable(key: string): PassThrough {
    this.started.push(key);
    const stream = new PassThrough();
    this.streams.set(key, stream);
    return stream;
  }

  write(key: string, chunk: string): void {
    this.streamOf(key).write(chunk);
  }

  end(key: string, chunk?: string): void {
    this.streamOf(key).end(chunk);
  }

  finish(key: string): void {
    this.gate(key).resolve(undefined);
  }

  fail(key: string, error: unknown): void {
    this.gate(key).reject(error);
  }

  complete(key: string, value: unknown): void {
    const subject = this.subjectOf(key);
    subject.next(value);
    subject.complete();
  }

  error(key: string, error: unknown): void {
    this.subjectOf(key).error(error);
  }

  /** Lets every handler still inside go (cleanup). */
  finishAll(): void {
    for (const gate of this.gates.values()) gate.resolve(undefined);
    for (const subject of this.subjects.values()) if (!subject.closed) subject.complete();
    for (const stream of this.streams.values()) if (!stream.writableEnded) stream.end();
  }

  private gate(key: string): Deferred<unknown> {
    let gate = this.gates.get(key);
    if (!gate) {
      gate = deferred();
      this.gates.set(key, gate);
    }
    return gate;
  }

  private streamOf(key: string): PassThrough {
    const stream = this.streams.get(key);
    if (!stream) throw new Error(`no byte stream ${key} has started`);
    return stream;
  }

  private subjectOf(key: string): Subject<unknown> {
    const subject = this.subjects.get(key);
    if (!subject) throw new Error(`no stream ${key} has started`);
    return subject;
  }
}
