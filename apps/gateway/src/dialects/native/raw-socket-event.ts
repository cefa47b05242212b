import type { Socket } from 'socket.io';

/**
 * Sends a value that is already JSON text as the one argument of a Socket.IO event, without
 * decoding and encoding it again: the gateway relays each run event in the form it was
 * published in. Writes the Socket.IO (protocol 5) EVENT packet `2[/nsp,]["name",<json>]` straight
 * to the engine.io connection, which is what `socket.emit` does once it has encoded the packet.
 */
export function rawEventSender(socket: Socket, name: string): (json: string) => void {
  const nsp = socket.nsp.name;
  const prefix = `2${nsp === '/' ? '' : `${nsp},`}[${JSON.stringify(name)},`;
  return (json) => {
    if (socket.conn.readyState === 'open') socket.conn.write(`${prefix}${json}]`);
  };
}
