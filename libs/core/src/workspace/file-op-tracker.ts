import { formatPatch, structuredPatch } from 'diff';
import { FileOperationEvent, type EventEnvelope, type FileOpStats } from '../events/execution-event.js';

export type FileOperation = 'create' | 'write' | 'edit' | 'delete';

/** What a `file_operation` event carries. */
export interface FileOperationRecord {
  operation: FileOperation;
  /** Workspace-relative path. */
  path: string;
  /** Unified diff (git style headers, 3 lines of context). */
  diff: string;
  stats: FileOpStats;
}

export interface FileOpTrackerOptions {
  /** Longest diff text kept in an event; longer ones are cut (stats stay exact). Default 64 KiB. */
  maxDiffChars?: number;
  /** Time budget for one diff before falling back to a summary. Default 2 s. */
  diffTimeoutMs?: number;
  /** Records kept for {@link FileOpTracker.operations}. Default 200. */
  historyLimit?: number;
}

/**
 * Computes the unified diff of each file change made by the agent, for
 * `file_operation` events, and remembers the recent ones.
 */
export class FileOpTracker {
  private readonly history: FileOperationRecord[] = [];
  private readonly maxDiffChars: number;
  private readonly diffTimeoutMs: number;
  private readonly historyLimit: number;

  constructor(options: FileOpTrackerOptions = {}) {
    this.maxDiffChars = options.maxDiffChars ?? 64 * 1024;
    this.diffTimeoutMs = options.diffTimeoutMs ?? 2_000;
    this.historyLimit = options.historyLimit ?? 200;
  }

  /**
   * Records one change.
   * @param before the content before (null when the file did not exist).
   * @param after the content after (null when the file was deleted).
   */
  track(operation: FileOperation, filePath: string, before: string | null, after: string | null): FileOperationRecord {
    const record = { operation, path: filePath, ...this.diff(filePath, before, after) };
    this.history.push(record);
    if (this.history.length > this.historyLimit) this.history.shift();
    return record;
  }

  /** The recorded changes, oldest first. */
  operations(): readonly FileOperationRecord[] {
    return this.history;
  }

  private diff(filePath: string, before: string | null, after: string | null): { diff: string; stats: FileOpStats } {
    const patch = structuredPatch(
      before === null ? '/dev/null' : `a/${filePath}`,
      after === null ? '/dev/null' : `b/${filePath}`,
      before ?? '',
      after ?? '',
      undefined,
      undefined,
      { context: 3, timeout: this.diffTimeoutMs },
    );
    if (!patch) {
      const stats = { additions: countLines(after), deletions: countLines(before) };
      return { diff: `--- a/${filePath}\n+++ b/${filePath}\n(diff not computed: change too large; -${stats.deletions} +${stats.additions} lines)\n`, stats };
    }
    const stats = { additions: 0, deletions: 0 };
    for (const hunk of patch.hunks) {
      for (const line of hunk.lines) {
        if (line.startsWith('+')) stats.additions++;
        else if (line.startsWith('-')) stats.deletions++;
      }
    }
    let diff = patch.hunks.length === 0 ? '' : formatPatch(patch, { includeIndex: false, includeUnderline: false, includeFileHeaders: true });
    if (diff.length > this.maxDiffChars) diff = `${diff.slice(0, this.maxDiffChars)}\n... (diff truncated)\n`;
    return { diff, stats };
  }
}

function countLines(text: string | null): number {
  if (!text) return 0;
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

/** The `file_operation` event for a record. */
export function fileOperationEvent(envelope: EventEnvelope, record: FileOperationRecord): FileOperationEvent {
  return new FileOperationEvent(envelope, record.operation, record.path, record.diff, record.stats);
}
