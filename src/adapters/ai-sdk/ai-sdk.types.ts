import type { LanguageModelMiddleware, ToolSet } from 'ai' with { 'resolution-mode': 'import' };

// Every AI SDK type is derived from the two names `ai` exports, so this adapter never names the
// `@ai-sdk/*` packages it does not depend on, and `import type` keeps `ai` out of the emitted JavaScript.
export type { LanguageModelMiddleware, ToolSet };

/** One tool of a {@link ToolSet}. */
export type AiSdkTool = ToolSet[string];

/** What `wrapGenerate` and `wrapStream` receive from `wrapLanguageModel`. */
export type WrapGenerateOptions = Parameters<NonNullable<LanguageModelMiddleware['wrapGenerate']>>[0];
export type WrapStreamOptions = Parameters<NonNullable<LanguageModelMiddleware['wrapStream']>>[0];

/** The parameters of one model call: `params.prompt` is the prompt sent to the provider. */
export type ModelCallParams = WrapGenerateOptions['params'];

/** The result of one `doGenerate` and one `doStream` call. */
export type ModelGenerateResult = Awaited<ReturnType<WrapGenerateOptions['doGenerate']>>;
export type ModelStreamResult = Awaited<ReturnType<WrapStreamOptions['doStream']>>;

/** One part of a model's stream. */
export type ModelStreamPart = ModelStreamResult['stream'] extends ReadableStream<infer P> ? P : never;
