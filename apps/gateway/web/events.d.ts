/**
 * The events the web UI receives, for an editor's check of its plain JavaScript (JSDoc
 * `import('./events.js')`). Never loaded by the browser nor served (see ASSET in
 * src/web/web-ui.ts): the types are the one vocabulary of libs/core, so the UI cannot drift from it.
 */
import type { EventDict } from '../../../libs/core/src/events/execution-event.js';
import type { ErrorEventBody } from '../src/runs/client-limits.js';
import type { UserSocketEvent } from '../src/dialects/native/user-sockets.js';

export type {
  ActionRequest,
  DoneEventDict,
  ElicitationAction,
  ElicitationEventDict,
  ElicitationMode,
  ElicitationRequestEventDict,
  ErrorEventDict,
  EventDict,
  EventDictOf,
  EventType,
  FileOperationEventDict,
  FileOpStats,
  HitlRequestEventDict,
  RunQueuedEventDict,
  RunStartedEventDict,
  TextEventDict,
  TodoItem,
  TodoUpdateEventDict,
  ToolCallEventDict,
  ToolResultEventDict,
  ToolResultStatus,
} from '../../../libs/core/src/events/execution-event.js';
export type { ErrorEventBody, UserSocketEvent };

/** What the chat socket delivers: a run's events, and with seq 0 the gateway's own errors and the user's events. */
export type SocketEvent = EventDict | ErrorEventBody | UserSocketEvent;
