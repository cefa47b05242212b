import { text } from 'node:stream/consumers';

/** `-p -` reads the question from standard input, so a script can pipe a long one in. */
export async function readQuestion(given: string, stdin: NodeJS.ReadableStream = process.stdin): Promise<string> {
  return given === '-' ? (await text(stdin)).trim() : given;
}
