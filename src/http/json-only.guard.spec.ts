import { type ExecutionContext, UseGuards } from '@nestjs/common';
import { GUARDS_METADATA } from '@nestjs/common/constants';
import { HttpRequestError } from './http-request.errors';
import { isJsonContentType, JsonOnly, JsonOnlyGuard } from './json-only.guard';

function contextOf(method: string, headers: Record<string, string>, type = 'http'): ExecutionContext {
  return { getType: () => type, switchToHttp: () => ({ getRequest: () => ({ method, headers }) }) } as unknown as ExecutionContext;
}

function codeOf(method: string, headers: Record<string, string>): string | boolean {
  try {
    return new JsonOnlyGuard().canActivate(contextOf(method, headers));
  } catch (error) {
    return HttpRequestError.isAgentRuntimeError(error, HttpRequestError) ? error.code : 'other';
  }
}

class OtherGuard {
  canActivate(): boolean {
    return true;
  }
}

describe('JsonOnlyGuard', () => {
  it.each([
    ['application/json', true],
    ['application/json; charset=utf-8', true],
    ['APPLICATION/JSON ;charset=UTF-8', true],
    ['application/problem+json', false],
    ['application/jsonp', false],
    ['application/x-www-form-urlencoded', false],
    ['multipart/form-data; boundary=x', false],
    ['text/plain;charset=UTF-8', false],
    ['text/json', false],
    ['', false],
  ])('reads %j as JSON: %s', (value, expected) => {
    expect(isJsonContentType(value)).toBe(expected);
  });

  it.each(['POST', 'PUT', 'PATCH', 'DELETE', 'post'])('refuses a %s with a form, text or no Content-Type over a body with 415 unsupported_media_type', (method) => {
    expect(codeOf(method, { 'content-type': 'application/x-www-form-urlencoded', 'content-length': '3' })).toBe('unsupported_media_type');
    expect(codeOf(method, { 'content-type': 'text/plain', 'content-length': '0' })).toBe('unsupported_media_type');
    expect(codeOf(method, { 'content-length': '2' })).toBe('unsupported_media_type');
    expect(codeOf(method, { 'transfer-encoding': 'chunked' })).toBe('unsupported_media_type');
    expect(codeOf(method, { 'content-type': 'application/json', 'content-length': '2' })).toBe(true);
    expect(codeOf(method, {})).toBe(true);
    expect(codeOf(method, { 'content-length': '0' })).toBe(true);
  });

  it('lets other methods and other contexts through untouched', () => {
    expect(codeOf('GET', { 'content-type': 'text/plain', 'content-length': '3' })).toBe(true);
    expect(codeOf('OPTIONS', { 'content-type': 'text/plain' })).toBe(true);
    expect(new JsonOnlyGuard().canActivate(contextOf('POST', { 'content-type': 'text/plain' }, 'rpc'))).toBe(true);
  });

  it('answers 415 with the package body', () => {
    expect(HttpRequestError.httpAnswers.unsupported_media_type).toEqual({ status: 415 });
  });

  describe('@JsonOnly()', () => {
    it('puts the guard ahead of the guards of the same handler (`@Admission` among them), whatever the order of the decorators', () => {
      class Routes {
        @JsonOnly() @UseGuards(OtherGuard) below(): void {}
        @UseGuards(OtherGuard) @JsonOnly() above(): void {}
        @JsonOnly() @UseGuards(OtherGuard) @JsonOnly() twice(): void {}
      }
      const guards = (name: keyof Routes) => Reflect.getMetadata(GUARDS_METADATA, Routes.prototype[name]) as unknown[];
      expect(guards('below')).toEqual([JsonOnlyGuard, OtherGuard]);
      expect(guards('above')).toEqual([JsonOnlyGuard, OtherGuard]);
      expect(guards('twice')).toEqual([JsonOnlyGuard, OtherGuard]);
    });

    it('puts the guard ahead of a class’s own guards', () => {
      @JsonOnly()
      @UseGuards(OtherGuard)
      class Routes {}
      expect(Reflect.getMetadata(GUARDS_METADATA, Routes)).toEqual([JsonOnlyGuard, OtherGuard]);
    });
  });
});
