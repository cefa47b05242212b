/** Where the DataAgent API lives: every route but the OpenAI-compatible `/v1` ones is under it. */
export const API_PREFIX = 'api/v1';
