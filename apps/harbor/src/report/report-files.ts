import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { HarborReport } from './harbor-report.js';
import { renderHtmlReport } from './html-report.js';

/** Writes `report.json` and `report.html` into `dir` (created if needed); returns their paths. */
export async function writeReportFiles(dir: string, report: HarborReport): Promise<{ json: string; html: string }> {
  await mkdir(dir, { recursive: true });
  const json = join(dir, 'report.json');
  const html = join(dir, 'report.html');
  await writeFile(json, `${JSON.stringify(report, null, 2)}\n`);
  await writeFile(html, renderHtmlReport(report));
  return { json, html };
}
