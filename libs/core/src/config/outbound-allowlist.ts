import { registerDecorator, type ValidationArguments } from 'class-validator';
import { parseAllowlist } from '../tools/builtin/net/outbound-guard.js';

/** Validates DATAAGENT_OUTBOUND_ALLOWLIST entries at startup, naming the first bad one. */
export function IsOutboundAllowlist(): PropertyDecorator {
  return (target, property) =>
    registerDecorator({
      name: 'isOutboundAllowlist',
      target: target.constructor,
      propertyName: String(property),
      validator: {
        validate: (value: unknown) => Array.isArray(value) && value.every((v) => typeof v === 'string') && problem(value) === null,
        defaultMessage: ({ value }: ValidationArguments) =>
          `must list hosts, *.suffixes, IPs, CIDRs or host:port entries (${Array.isArray(value) ? problem(value as string[]) ?? '' : 'not a list'})`,
      },
    });
}

function problem(entries: string[]): string | null {
  try {
    parseAllowlist(entries);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}
