/** One assistant answer: its markdown, tool cards, file diffs, todo list, errors and end. */
import { html, useMemo, useState } from './vendor/preact.js';
import { renderMarkdown } from './markdown.js';
import { diffLines, shortArgs, usageLine } from './run-view.js';

export function Turn({ turn, onRetry }) {
  const streaming = turn.status === 'streaming';
  return html`
    <article class="msg assistant" data-testid="assistant-message" data-run-id=${turn.runId} data-status=${turn.status} aria-busy=${streaming ? 'true' : 'false'}>
      ${streaming && !turn.started && html`<p class="hint">Waiting for a worker…</p>`}
      ${turn.blocks.map((block, i) => {
        switch (block.kind) {
          case 'text':
            return html`<${Markdown} key=${i} text=${block.text} />`;
          case 'tool':
            return html`<${ToolCard} key=${block.id ?? i} tool=${block} />`;
          case 'diff':
            return html`<${FileDiff} key=${i} diff=${block} />`;
          case 'todos':
            return html`<${TodoList} key=${i} todos=${block.todos} />`;
          case 'error':
            return html`<${RunError} key=${i} error=${block} onRetry=${!streaming && block.recoverable && !block.continues ? onRetry : null} />`;
          default:
            return null;
        }
      })}
      ${streaming && turn.started && html`<span class="typing" aria-hidden="true"></span>`}
      ${turn.status === 'cancelled' && html`<p class="run-ended" data-testid="run-ended">Stopped</p>`}
      ${turn.status === 'failed' && html`<p class="run-ended" data-testid="run-ended">Failed</p>`}
      ${!streaming && usageLine(turn.usage) && html`<p class="run-usage" data-testid="run-usage" title="What this answer's model calls used">${usageLine(turn.usage)}</p>`}
    </article>
  `;
}

/** Markdown re-rendered only when its text changed (each streamed chunk changes one block). */
function Markdown({ text }) {
  const markup = useMemo(() => ({ __html: renderMarkdown(text) }), [text]);
  return html`<div class="markdown" dangerouslySetInnerHTML=${markup}></div>`;
}

/** MCP tools (`server.tool`) first: their names may contain any of the words below. */
const TOOL_ICONS = [
  [/\./, 'mcp'],
  [/^(read_file|ls|glob|grep)$/, 'read'],
  [/^(write_file|edit_file)$/, 'write'],
  [/^shell$/, 'shell'],
  [/^(http_request|fetch_url)$/, 'web'],
  [/search/, 'search'],
  [/todo/, 'todo'],
  [/memory/, 'memory'],
  [/skill/, 'skill'],
];

function iconOf(name) {
  return TOOL_ICONS.find(([pattern]) => pattern.test(name))?.[1] ?? 'tool';
}

/** @type {Record<import('./events.js').ToolResultStatus | 'running', string>} */
const STATUS_LABELS = { running: 'running', success: 'done', error: 'failed', timeout: 'timed out', rejected: 'rejected', cancelled: 'cancelled', interrupted: 'interrupted' };

function ToolCard({ tool }) {
  const [open, setOpen] = useState(false);
  const resultId = `tool-result-${tool.id}`;
  const label = tool.status === 'running' && tool.awaitingApproval ? 'awaiting approval' : tool.status === 'running' && tool.awaitingInput ? 'awaiting your answer' : STATUS_LABELS[tool.status] ?? tool.status;
  return html`
    <div class="tool-card" data-testid="tool-card" data-tool-name=${tool.name} data-status=${tool.status}>
      <div class="tool-head">
        <span class="tool-icon" data-icon=${iconOf(tool.name)} aria-hidden="true"></span>
        <span class="tool-name">${tool.name}</span>
        <code class="tool-args" data-testid="tool-card-args" title=${JSON.stringify(tool.args)}>${shortArgs(tool.args)}</code>
        <span class=${`tool-status status-${tool.status}`}>${label}</span>
        <button type="button" class="link" data-testid="tool-card-toggle" aria-expanded=${open ? 'true' : 'false'} aria-controls=${resultId} onClick=${() => setOpen(!open)}>
          ${open ? 'Hide result' : 'Result'}
        </button>
      </div>
      <div class="tool-result" id=${resultId} data-testid="tool-card-result" hidden=${!open}>
        ${tool.result === undefined ? html`<p class="hint">No result yet.</p>` : html`<pre>${formatResult(tool.result)}</pre>`}
        ${imagesOf(tool.content).map((src, i) => html`<img key=${i} src=${src} alt=${`Image returned by ${tool.name}`} />`)}
      </div>
    </div>
  `;
}

function formatResult(result) {
  return typeof result === 'string' ? result : JSON.stringify(result, null, 2);
}

/** Image blocks of an MCP tool's content, as data: URLs (the only images the page shows). */
function imagesOf(content) {
  if (!Array.isArray(content)) return [];
  return content
    .filter((b) => b && b.type === 'image' && typeof b.data === 'string' && /^image\/(png|gif|jpeg|webp)$/.test(b.mimeType ?? ''))
    .map((b) => `data:${b.mimeType};base64,${b.data}`);
}

function FileDiff({ diff }) {
  const lines = useMemo(() => diffLines(diff.diff), [diff.diff]);
  return html`
    <figure class="file-diff" data-testid="file-diff">
      <figcaption>
        <span class="diff-op">${diff.operation}</span>
        <code>${diff.path}</code>
        <span class="diff-stats"><span class="adds">+${diff.stats.additions}</span> <span class="dels">-${diff.stats.deletions}</span></span>
      </figcaption>
      ${lines.length > 0 && html`<pre>${lines.map((line, i) => html`<span key=${i} class=${`line ${line.kind}`}>${line.text}${'\n'}</span>`)}</pre>`}
    </figure>
  `;
}

const TODO_LABELS = { pending: 'to do', in_progress: 'in progress', completed: 'done' };

function TodoList({ todos }) {
  return html`
    <ul class="todo-list" data-testid="todo-list" aria-label="Plan">
      ${todos.map(
        (todo, i) => html`<li key=${i} class=${`todo ${todo.status}`} data-testid="todo-item" data-status=${todo.status} title=${TODO_LABELS[todo.status] ?? todo.status}>${todo.content}</li>`,
      )}
    </ul>
  `;
}

function RunError({ error, onRetry }) {
  return html`
    <div class=${error.continues ? 'error-notice notice-info' : 'error-notice'} data-testid="error-notice" role="alert">
      <p>${error.continues ? `${error.message} The run continues on another worker.` : error.message}</p>
      ${onRetry && html`<button type="button" data-testid="retry" onClick=${onRetry}>Retry</button>`}
    </div>
  `;
}
