import { AgentRuntimeError, type ErrorDetails } from './agent-runtime-error';

class SampleError extends AgentRuntimeError<'sample_code'> {
  constructor(details?: ErrorDetails) {
    super('SampleError', 'sample_code', details);
  }
}

describe('AgentRuntimeError', () => {
  it('carries the code, the name and a message made of the code alone', () => {
    const error = new SampleError();
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('SampleError');
    expect(error.code).toBe('sample_code');
    expect(error.message).toBe('sample_code');
    expect('details' in error).toBe(false);
  });

  it('freezes a copy of the details and shows them in the message', () => {
    const details = { field: 'globalLimit' };
    const error = new SampleError(details);
    details.field = 'changed';
    expect(error.details).toEqual({ field: 'globalLimit' });
    expect(Object.isFrozen(error.details)).toBe(true);
    expect(error.message).toBe('sample_code {"field":"globalLimit"}');
  });
});
