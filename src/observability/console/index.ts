export { ConsoleModule } from './console.module';
export type { ConsoleModuleOptions } from './console-options';
export { ConsoleError, type ConsoleErrorCode } from './console.errors';
export type {
  ConsoleAdmission,
  ConsoleAgentAdmission,
  ConsoleConfirmation,
  ConsoleDenial,
  ConsoleDenials,
  ConsoleRun,
  ConsoleSnapshot,
} from './console-snapshot.types';
