import { ApiProperty, ApiPropertyOptional, type ApiPropertyOptions } from '@nestjs/swagger';

const RPC_ID: ApiPropertyOptions = { oneOf: [{ type: 'string' }, { type: 'integer' }], nullable: true, description: "The call's id, echoed" };

/** A JSON-RPC 2.0 call of A2A 1.0 (proto JSON params). */
export class A2aRpcRequestBody {
  @ApiProperty({ enum: ['2.0'] })
  jsonrpc: '2.0';

  @ApiProperty(RPC_ID)
  id: string | number | null;

  @ApiProperty({ enum: ['SendMessage', 'SendStreamingMessage', 'GetTask', 'CancelTask', 'SubscribeToTask'] })
  method: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description:
      'SendMessage / SendStreamingMessage: `{message: {messageId, role: "ROLE_USER", parts: [{text}], contextId?, taskId?, metadata?: {assistant_id}}, configuration?: {returnImmediately}}`; ' +
      'GetTask, CancelTask, SubscribeToTask: `{id}` (the task id, which is the run id)',
  })
  params: Record<string, unknown>;
}

/** A JSON-RPC result: a Task (GetTask, CancelTask), `{task}` (SendMessage) or, streamed, a StreamResponse. */
export class A2aRpcResultBody {
  @ApiProperty({ enum: ['2.0'] })
  jsonrpc: '2.0';

  @ApiProperty(RPC_ID)
  id: string | number | null;

  @ApiProperty({ type: 'object', additionalProperties: true, description: 'A Task, `{task: Task}`, or a StreamResponse (`{task}`, `{statusUpdate}` or `{artifactUpdate}`)' })
  result: Record<string, unknown>;
}

export class A2aRpcErrorData {
  @ApiProperty({ description: "DataAgent's error_code (as in {error_code, message, details})", example: 'run_not_found' })
  error_code: string;

  @ApiProperty({ type: 'object', additionalProperties: true })
  details: Record<string, unknown>;
}

export class A2aRpcError {
  @ApiProperty({ description: 'JSON-RPC and A2A codes: -32601 method not found, -32602 invalid params (an unknown assistant too), -32001 task not found, -32002 not cancelable, -32000 DataAgent\'s own (a bad key, a quota)', example: -32001 })
  code: number;

  @ApiProperty()
  message: string;

  @ApiPropertyOptional({ type: A2aRpcErrorData })
  data: A2aRpcErrorData;
}

/** A JSON-RPC error response. */
export class A2aRpcErrorBody {
  @ApiProperty({ enum: ['2.0'] })
  jsonrpc: '2.0';

  @ApiProperty(RPC_ID)
  id: string | number | null;

  @ApiProperty({ type: A2aRpcError })
  error: A2aRpcError;
}
