import { Body, Controller, HttpCode, Inject, Param, Post, Req, Res, UseInterceptors } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiParam, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { Caller } from '#core/auth/caller.js';
import { findAssistant } from '#core/config/assistant-catalog.js';
import { CurrentCaller } from '../../auth/api-key.guard.js';
import { RunsService, type SubmitOptions, type SubmittedRun } from '../../runs/runs.service.js';
import { ApiError } from '../../common/api-error.js';
import { pipeRunEvents, sseFrame } from '../../runs/run-event-stream.js';
import { CancelAnswer } from '../../runs/control-answers.dto.js';
import { ControlService } from '../../runs/run-control.service.js';
import type { GatewaySettings } from '../../infra/gateway-config.js';
import { SETTINGS } from '../../infra/tokens.js';
import { SessionAccess } from '../../sessions/session-access.service.js';
import { holdMessagesToLimit } from '../../common/message-limit.js';
import { runOfRequest } from '#core/hitl/approval-request-id.js';
import { AgUiProjection, type ResumePoint } from './ag-ui-events.js';
import { readRunAgentInput, type RunAgentRequest, type ThreadRequest } from './run-agent-input.js';
import { HoldsStreamSlot } from '../../quotas/stream-slot.interceptor.js';

const RUN_AGENT_INPUT = {
  type: 'object',
  required: ['threadId', 'runId', 'messages'],
  description: "AG-UI 1.0 RunAgentInput, as HttpAgent sends it. The thread is the DataAgent session (created on its first run); the last message, when it is the person's, is the new turn",
  properties: {
    threadId: { type: 'string', description: "The thread: the caller's own session by that name, created on its first run (1-64 letters, digits, _ or -)" },
    runId: { type: 'string', description: "The client's id of this AG-UI run, echoed on RUN_STARTED and RUN_FINISHED" },
    messages: { type: 'array', items: { type: 'object', additionalProperties: true }, description: 'The conversation. Last `user`: a new turn. Last `tool` (written by the client): the results of its tools. Otherwise: re-attach to the thread\'s run after the cursor the messages carry (`metadata.dataagent`)' },
    tools: { type: 'array', items: { type: 'object', additionalProperties: true }, description: "The client's own tools ({name, description, parameters}); a call to one ends the AG-UI run with it pending" },
    resume: { type: 'array', items: { type: 'object', additionalProperties: true }, description: 'Answers to the interrupts (approvals) that ended the last run: {interruptId, status: "resolved", payload: {approved, message?}} or status "cancelled" (reject)' },
    forwardedProps: { type: 'object', additionalProperties: true, description: '`dataagent: {run_id?, after_seq}` re-attaches to the run after that event, whatever the messages say' },
    context: { type: 'array', items: { type: 'object', additionalProperties: true } },
    state: { type: 'object', additionalProperties: true },
  },
};

const AG_UI_STREAM = {
  type: 'string',
  description: 'AG-UI events as server-sent events (`data: <event JSON>`): RUN_STARTED, TEXT_MESSAGE_*, TOOL_CALL_*, then RUN_FINISHED (outcome success, interrupt or cancelled) or RUN_ERROR. Each event\'s `metadata.dataagent` names the DataAgent run and `seq` it comes from',
};

/**
 * AG-UI 1.0, for `@ag-ui/client`'s HttpAgent as it is: the thread is the session, each AG-UI run
 * a projection of a DataAgent run's event log. An approval ends the AG-UI run with an interrupt
 * (the DataAgent run waits), and the next run's `resume` answers it and streams on from there.
 * A dropped connection is not a stop: a run with no new input re-attaches after the client's
 * cursor. Stop is its own request.
 */
@ApiTags('ag-ui')
@Controller('ag-ui')
export class AgUiController {
  constructor(
    private readonly runs: RunsService,
    private readonly control: ControlService,
    private readonly access: SessionAccess,
    @Inject(SETTINGS) private readonly settings: GatewaySettings,
  ) {}

  /** Runs the default assistant on the thread. */
  @UseInterceptors(HoldsStreamSlot)
  @Post()
  @HttpCode(200)
  @ApiOperation({ summary: 'Run the default assistant on an AG-UI thread (HttpAgent): a new turn, client tool results, an approval (resume), or a re-attach' })
  @ApiBody({ schema: RUN_AGENT_INPUT })
  @ApiProduces('text/event-stream')
  @ApiResponse({ status: 200, content: { 'text/event-stream': { schema: AG_UI_STREAM } } })
  run(@CurrentCaller() caller: Caller, @Body() body: unknown, @Req() req: Request, @Res() res: Response): Promise<void> {
    return this.runAgent(caller, undefined, body, req, res);
  }

  /** Runs the named assistant on the thread. @throws ApiError 404 for an unknown assistant. */
  @UseInterceptors(HoldsStreamSlot)
  @Post(':assistantId')
  @HttpCode(200)
  @ApiOperation({ summary: 'Run an assistant on an AG-UI thread (HttpAgent)' })
  @ApiParam({ name: 'assistantId', description: 'An assistant id' })
  @ApiBody({ schema: RUN_AGENT_INPUT })
  @ApiProduces('text/event-stream')
  @ApiResponse({ status: 200, content: { 'text/event-stream': { schema: AG_UI_STREAM } } })
  runAssistant(@CurrentCaller() caller: Caller, @Param('assistantId') assistantId: string, @Body() body: unknown, @Req() req: Request, @Res() res: Response): Promise<void> {
    if (!findAssistant(assistantId)) throw ApiError.notFound('assistant', assistantId);
    return this.runAgent(caller, assistantId, body, req, res);
  }

  /** Stops the thread's active run: its AG-UI stream ends with RUN_FINISHED, outcome cancelled. */
  @Post(':threadId/stop')
  @HttpCode(200)
  @ApiOperation({ summary: "Stop the AG-UI thread's active run (HttpAgent's abortRun only drops the connection, which is not a stop)" })
  @ApiOkResponse({ type: CancelAnswer })
  async stop(@CurrentCaller() caller: Caller, @Param('threadId') threadId: string): Promise<CancelAnswer> {
    const session = await this.access.getNamed(caller, threadId);
    return { ...(await this.control.cancelSession(caller, session.sessionId)), session_id: threadId };
  }

  private async runAgent(caller: Caller, assistantId: string | undefined, body: unknown, req: Request, res: Response): Promise<void> {
    holdMessagesToLimit((body as { messages?: unknown } | null)?.messages, 'messages', this.settings.server.maxMessageBytes);
    const input = readRunAgentInput(body);
    // Everything that can be refused is refused here, before the stream's headers: HttpAgent shows an HTTP error with our body.
    const { run, from } = await this.begin(caller, assistantId, input, String(req.id ?? ''));
    await this.stream(input, run, from, res);
  }

  /** Starts what the input asks for, and says which DataAgent run to read from where. */
  private async begin(caller: Caller, assistantId: string | undefined, input: RunAgentRequest, requestId: string): Promise<{ run: SubmittedRun; from: ResumePoint }> {
    const { threadId, request, clientTools } = input;
    switch (request.kind) {
      case 'turn':
      case 'tool_results':
        return { run: await this.submit(caller, assistantId, threadId, request, clientTools, requestId), from: { afterSeq: 0 } };
      case 'resume': {
        const requestIdOf = request.answers.at(-1)!.requestId;
        const runId = runOfRequest(requestIdOf);
        if (!runId) throw ApiError.notFound('hitl_request', requestIdOf);
        const run = await this.runs.resolveRun(caller, (await this.access.findNamed(caller, threadId)).sessionId, runId);
        for (const answer of request.answers) {
          try {
            await this.control.decide(caller, answer.requestId, answer.decision, answer.message);
          } catch (err) {
            // Answered already (this resume sent again after a cut connection): read on from the client's cursor.
            if (!(err instanceof ApiError && err.errorCode === 'hitl_already_decided')) throw err;
          }
        }
        return { run, from: { afterSeq: request.cursor?.runId === run.runId ? request.cursor.afterSeq : 0, afterRequest: requestIdOf } };
      }
      case 'reattach': {
        const { cursor } = request;
        const run = await this.runs.resolveRun(caller, (await this.access.getNamed(caller, threadId)).sessionId, cursor?.runId || undefined);
        return { run, from: { afterSeq: cursor && (cursor.runId === '' || cursor.runId === run.runId) ? cursor.afterSeq : 0 } };
      }
    }
  }

  private async submit(caller: Caller, assistantId: string | undefined, threadId: string, request: Extract<ThreadRequest, { kind: 'turn' | 'tool_results' }>, clientTools: SubmitOptions['clientTools'], requestId: string): Promise<SubmittedRun> {
    const { sessionId, session: existing } = await this.access.findNamed(caller, threadId);
    const options: SubmitOptions = clientTools?.length ? { clientTools } : {};
    if (request.kind === 'tool_results') {
      if (!existing) throw ApiError.notFound('session', threadId);
      options.toolResults = request.toolResults;
    } else if (!existing) {
      Object.assign(options, { clientSessionId: threadId, ...(request.history.length > 0 ? { history: request.history } : {}) });
    }
    const message = request.kind === 'turn' ? request.message : '';
    return this.runs.submit(caller, { message, ...(assistantId ? { assistant_id: assistantId } : {}), ...(existing ? { session_id: sessionId } : {}) }, requestId, options);
  }

  /** Writes the AG-UI run: RUN_STARTED, then the DataAgent run's events past `from`, until the AG-UI run ends. */
  private async stream(input: RunAgentRequest, run: SubmittedRun, from: ResumePoint, res: Response): Promise<void> {
    const projection = new AgUiProjection(input.threadId, input.runId, from);
    await pipeRunEvents(res, {
      headers: { 'x-dataagent-session': run.sessionId, 'x-dataagent-run': run.runId },
      opening: [sseFrame(projection.started(run))],
      limit: this.settings.server.clientBufferMaxBytes,
      follow: (listener, pacing) => this.runs.follow(run, 0, listener, pacing),
      step: (event) => {
        const { events, ends } = projection.next(event);
        return { frames: events.map((e) => sseFrame(e)), ends };
      },
    });
  }
}
