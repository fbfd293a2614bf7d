/**
 * The pre-compaction flush: invoke `FlushFunction` over Lambda Invoke (the AWS SDK's Lambda client) and
 * never let it fail a compaction.
 *
 * The call is bounded by a client-side timeout (5 s by default) on top of the function's own budget, and
 * every problem (a timeout, throttling, a missing function, no region, a malformed answer) comes back as
 * `{"status": "failed", "reason"}`: summarization proceeds either way.
 */

import { InvokeCommand, LambdaClient } from "@aws-sdk/client-lambda";

import { contextJson } from "./context.js";
import { isLoopback } from "./signing.js";
import type { ConversationContext, FlushMessage, FlushResult } from "./types.js";

export const FLUSH_TIMEOUT_MS = 5_000;
const STATUSES = new Set(["written", "duplicate", "disabled", "failed"]);
const LOCAL_REGION = "us-east-1";

/**
 * A Lambda client sized for the flush: one attempt (the flush is idempotent per compaction id, and a
 * retry would only eat the budget) and socket timeouts within the budget.
 *
 * In AWS it uses the standard credential chain and region. Against the local stack
 * (`endpoint: "http://127.0.0.1:3001"`, `make run`) the region defaults to `AWS_REGION` or us-east-1 and
 * the credentials to placeholders the local stack does not check, so it works with no AWS configuration.
 */
export function flushLambdaClient(
  options: { endpoint?: string; region?: string; timeoutMs?: number } = {},
): LambdaClient {
  const timeoutMs = options.timeoutMs ?? FLUSH_TIMEOUT_MS;
  const local = options.endpoint !== undefined && isLoopback(options.endpoint);
  return new LambdaClient({
    maxAttempts: 1,
    requestHandler: { connectionTimeout: Math.min(1_000, timeoutMs), requestTimeout: timeoutMs },
    ...(options.endpoint !== undefined && { endpoint: options.endpoint }),
    ...(options.region !== undefined && { region: options.region }),
    ...(local && {
      region: options.region ?? process.env["AWS_REGION"] ?? process.env["AWS_DEFAULT_REGION"] ?? LOCAL_REGION,
      credentials: { accessKeyId: "local", secretAccessKey: "local" }, // never looked up: no metadata probe
    }),
  });
}

function failed(reason: string): FlushResult {
  return { status: "failed", note: null, reason };
}

/** Invoke `functionName` (RequestResponse) and resolve to its answer, or to `failed`; never rejects. */
export async function flushBeforeCompaction(
  lambda: LambdaClient,
  functionName: string,
  request: { context: ConversationContext; compactionId: string; messages: FlushMessage[] },
  timeoutMs: number = FLUSH_TIMEOUT_MS,
): Promise<FlushResult> {
  const payload = {
    context: contextJson(request.context),
    compaction_id: request.compactionId,
    messages: request.messages.map(({ role, content }) => ({ role, content })),
  };
  // The deadline holds whatever the SDK does before sending (resolving credentials, a slow socket).
  const deadline = AbortSignal.timeout(timeoutMs);
  const expired = new Promise<never>((_, reject) =>
    deadline.addEventListener("abort", () => reject(deadline.reason), { once: true }),
  );
  const invoke = new InvokeCommand({
    FunctionName: functionName,
    InvocationType: "RequestResponse",
    Payload: new TextEncoder().encode(JSON.stringify(payload)),
  });
  let response;
  try {
    response = await Promise.race([lambda.send(invoke, { abortSignal: deadline }), expired]);
  } catch (error) {
    if (deadline.aborted) return failed(`no answer within ${timeoutMs} ms`);
    return failed(`the flush call failed: ${error instanceof Error ? error.name : typeof error}`);
  }
  if (response.FunctionError) return failed(`the flush function failed: ${response.FunctionError}`);
  let answer: unknown;
  try {
    answer = JSON.parse(new TextDecoder().decode(response.Payload));
  } catch {
    return failed("the flush answered in an unknown shape");
  }
  const status = (answer as { status?: unknown } | null)?.status;
  if (typeof answer !== "object" || answer === null || typeof status !== "string" || !STATUSES.has(status)) {
    return failed("the flush answered in an unknown shape");
  }
  return answer as FlushResult;
}
