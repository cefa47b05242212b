/** The Redis Cluster slot of a key (CRC16 of its hash tag, mod 16384): the library ioredis routes by. */
declare module 'cluster-key-slot' {
  export default function calculateSlot(key: string | Buffer): number;
}
