/**
 * The client the official MCP conformance suite (`@modelcontextprotocol/conformance`, client
 * mode) drives: the workers' own `McpConnection`, signed in with the gateway's sign-in code
 * (`beginSignIn` / `completeSignIn`) and the workers' token session (`McpOAuthSession`,
 * `oauthFetch`). The suite runs it as `node mcp-client-driver.js <server url>` with the scenario
 * in MCP_CONFORMANCE_SCENARIO and, where a scenario needs them, credentials in
 * MCP_CONFORMANCE_CONTEXT. `npm run conformance:mcp` runs every client scenario.
 *
 * Where a person would act, the driver does: it follows the authorization URL as a browser
 * would (the suite's authorization server answers with the redirect at once), checks `state`,
 * and hands the code to the callback step; for elicitation it accepts with no fields, so the
 * schema's defaults fill them.
 */
import { randomBytes } from 'node:crypto';
import { MemoryMcpOAuthStore } from '#core/mcp/mcp-oauth-store.js';
import type { McpServerConfig } from '#core/mcp/mcp-config.js';
import { McpAuthorizationRequired, McpConnection } from '#mcp/mcp-connection.js';
import { McpOAuthSession, MemoryRefreshLock, oauthFetch } from '#mcp/oauth/mcp-oauth-session.js';
import { beginSignIn, completeSignIn, type OAuthClientIdentity } from '#mcp/oauth/mcp-sign-in.js';

/** The suite's authorization servers take this URL as a client_id without fetching it. */
const CLIENT_METADATA_URL = 'https://conformance-test.local/client-metadata.json';
/** Sign-ins one connection attempt may start: a server that keeps asking for more scope is refused after this many. */
const MAX_SIGN_INS = 3;

const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const serverUrl = process.argv[2];
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}') as Record<string, string | undefined>;

async function main(): Promise<void> {
  if (!serverUrl || !scenario) throw new Error('usage: MCP_CONFORMANCE_SCENARIO=<scenario> mcp-client-driver <server url>');
  const config: McpServerConfig = { name: 'conformance', transport: 'streamable-http', url: serverUrl, ...machineSignIn() };
  const identity: OAuthClientIdentity = {
    redirectUrl: 'http://localhost:3000/callback',
    clientName: 'DataAgent',
    clientMetadataUrl: CLIENT_METADATA_URL,
    ...(scenario === 'auth/pre-registration' ? { preRegistered: { client_id: context.client_id!, client_secret: context.client_secret! } } : {}),
  };
  const owner = { tenantId: 'conformance', userId: 'person' };
  const store = new MemoryMcpOAuthStore();
  const session = new McpOAuthSession({ owner, server: config.name, store, lock: new MemoryRefreshLock() });
  const personal = config.oauth?.grant !== 'client_credentials';
  const connection = new McpConnection(config, {
    connectTimeoutMs: 15_000,
    ...(personal ? { authorizeFetch: (base) => oauthFetch(base, session, config.name) } : {}),
    // The person accepts without filling anything in: the schema's defaults fill the form.
    onElicitation: async () => ({ action: 'accept', content: {} }),
  });

  /** The person signs in: the browser follows the authorization URL, the callback redeems the code. */
  const signIn = async (challenge: McpAuthorizationRequired['challenge']) => {
    const state = randomBytes(16).toString('base64url');
    const { authorizationUrl, pending } = await beginSignIn({ serverUrl, identity, state, ...challenge });
    const redirect = await fetch(authorizationUrl, { redirect: 'manual' });
    const location = redirect.headers.get('location');
    if (!location) throw new Error(`the authorization server answered ${redirect.status} without a redirect`);
    const back = new URL(location);
    if ((back.searchParams.get('state') ?? state) !== state) throw new Error('the redirect came back with another state');
    const code = back.searchParams.get('code');
    if (!code) throw new Error(`the redirect came back without a code: ${back.searchParams.get('error') ?? location}`);
    const grant = await completeSignIn(pending, code, identity);
    const current = await store.get(owner, config.name);
    await store.put(owner, config.name, grant, current?.version ?? 0);
  };

  /** Runs `step`, signing in when the server asks, at most MAX_SIGN_INS times. */
  let signIns = 0;
  const withSignIn = async <T>(step: () => Promise<T>): Promise<T> => {
    for (;;) {
      try {
        return await step();
      } catch (err) {
        if (!(err instanceof McpAuthorizationRequired) || signIns >= MAX_SIGN_INS) throw err;
        signIns++;
        await signIn(err.challenge);
        if (!connection.connected) await withSignIn(() => connection.connect());
      }
    }
  };

  await withSignIn(() => connection.connect());
  const signal = new AbortController().signal;
  const tools = connection.catalog.tools.map((t) => t.name);
  for (const name of tools) {
    if (name === 'test-tool' || name === 'add_numbers' || name.startsWith('test_')) {
      await withSignIn(() => connection.callTool(name, name === 'add_numbers' ? { a: 1, b: 2 } : {}, { signal, timeoutMs: 15_000 }));
    }
  }
  await connection.close();
}

/** The client credentials scenarios: the operator's server config, as DataAgent would read it. */
function machineSignIn(): Pick<McpServerConfig, 'oauth'> {
  if (scenario === 'auth/client-credentials-basic') {
    return { oauth: { grant: 'client_credentials', clientId: context.client_id!, clientSecret: context.client_secret! } };
  }
  if (scenario === 'auth/client-credentials-jwt') {
    return { oauth: { grant: 'client_credentials', clientId: context.client_id!, privateKey: context.private_key_pem!, signingAlgorithm: context.signing_algorithm ?? 'ES256' } };
  }
  return {};
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
    process.exit(1);
  },
);
