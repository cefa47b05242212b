/** The Redis channels the bare relay's two processes share (bare-relay.ts). */

/** Where the relay gateway asks the relay worker to start a stream: the bare relay's queue. */
export const RELAY_START_CHANNEL = 'bench:relay:start';

/** A stream's events, from the relay worker to the relay gateway. */
export const relayStreamChannel = (id: string) => `bench:relay:stream:${id}`;

/** One chat to stream: its id names its channel; `message` goes to the LLM as the user's. */
export interface RelayStartRequest {
  id: string;
  message: string;
}
