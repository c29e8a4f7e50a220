import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module.js';

/** Starts the app on PORT and closes it (drain, then the DataSource) on SIGTERM or SIGINT, exiting 0. */
async function bootstrap(): Promise<void> {
  const app = await NestFactory.create(AppModule, { forceCloseConnections: true });
  await app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
  console.log(`consumer app listening on ${await app.getUrl()}`);
  let stopping = false;
  const stop = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: closing`);
    await app.close();
    console.log('closed');
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}

bootstrap().catch((error: unknown) => {
  console.error('consumer app failed to start:', error);
  process.exit(1);
});
