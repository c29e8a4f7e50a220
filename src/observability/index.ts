export * from './console';
export * from './metrics';
export * from './tracing';
