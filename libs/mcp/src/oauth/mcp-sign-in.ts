import { auth, discoverOAuthServerInfo, type OAuthClientProvider, type OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { McpServerConfig } from '#core/mcp/mcp-config.js';
import type { McpOAuthGrant } from '#core/mcp/mcp-oauth-store.js';

/** How DataAgent presents itself to an MCP server's authorization server. */
export interface OAuthClientIdentity {
  /** Where the authorization server sends the person's browser back (the gateway's callback). */
  redirectUrl: string;
  /** The client metadata document the gateway serves; used as the client_id where the server supports it (https only). */
  clientMetadataUrl?: string;
  clientName: string;
  /** Credentials the operator or user registered with the server beforehand; no registration then. */
  preRegistered?: { client_id: string; client_secret?: string; token_endpoint_auth_method?: string };
}

/**
 * A sign-in between its start and the authorization server's redirect back: kept on the
 * server side (the PKCE verifier never reaches the browser), found again by `state`.
 */
export interface PendingSignIn {
  serverUrl: string;
  state: string;
  codeVerifier: string;
  client: OAuthClientInformationMixed;
  discovery: OAuthDiscoveryState;
  scope?: string;
  resourceMetadataUrl?: string;
}

export interface BeginSignInOptions {
  serverUrl: string;
  identity: OAuthClientIdentity;
  /** Random, single use: binds the redirect back to this sign-in. */
  state: string;
  /** The scope a server asked for (WWW-Authenticate, or a step-up's insufficient_scope). */
  scope?: string;
  resourceMetadataUrl?: string;
  /** Every request of discovery, registration and token exchange goes through it (the outbound address policy). */
  fetchFn?: FetchLike;
}

/**
 * Starts a person's sign-in to an OAuth-protected MCP server (MCP authorization 2025-11-25):
 * protected resource metadata (RFC 9728) and authorization server metadata (RFC 8414, OpenID
 * discovery, the 2025-03-26 fallbacks), a client identity (pre-registered, else a client
 * metadata document, else dynamic registration), then an authorization URL with PKCE (S256),
 * `resource` (RFC 8707) and the scope: the server's challenge, else what it supports, else none;
 * with `offline_access` added when the authorization server offers it, for a refresh token.
 */
export async function beginSignIn(options: BeginSignInOptions): Promise<{ authorizationUrl: URL; pending: PendingSignIn }> {
  const { serverUrl, identity, fetchFn } = options;
  const resourceMetadataUrl = options.resourceMetadataUrl ? new URL(options.resourceMetadataUrl) : undefined;
  const info = await discoverOAuthServerInfo(serverUrl, { ...(resourceMetadataUrl ? { resourceMetadataUrl } : {}), ...(fetchFn ? { fetchFn } : {}) });
  const discovery: OAuthDiscoveryState = {
    authorizationServerUrl: String(info.authorizationServerUrl),
    ...(resourceMetadataUrl ? { resourceMetadataUrl: resourceMetadataUrl.toString() } : {}),
    ...(info.resourceMetadata ? { resourceMetadata: info.resourceMetadata } : {}),
    ...(info.authorizationServerMetadata ? { authorizationServerMetadata: info.authorizationServerMetadata } : {}),
  };
  const scope = withOfflineAccess(options.scope || info.resourceMetadata?.scopes_supported?.join(' '), info.authorizationServerMetadata?.scopes_supported);
  const provider = new SignInProvider(identity, discovery, options.state);
  const result = await auth(provider, { serverUrl, ...(scope ? { scope } : {}), ...(resourceMetadataUrl ? { resourceMetadataUrl } : {}), ...(fetchFn ? { fetchFn } : {}) });
  if (result !== 'REDIRECT' || !provider.authorizationUrl || !provider.verifier || !provider.client) {
    throw new Error('the authorization server did not start a sign-in');
  }
  return {
    authorizationUrl: provider.authorizationUrl,
    pending: {
      serverUrl,
      state: options.state,
      codeVerifier: provider.verifier,
      client: provider.client,
      discovery: provider.discovery,
      ...(scope ? { scope } : {}),
      ...(options.resourceMetadataUrl ? { resourceMetadataUrl: options.resourceMetadataUrl } : {}),
    },
  };
}

/**
 * Redeems the authorization code the browser brought back for tokens (with the PKCE verifier
 * and the same client authentication the authorization server asks for).
 * @throws the SDK's OAuthError when the authorization server refuses the code.
 */
export async function completeSignIn(pending: PendingSignIn, code: string, identity: OAuthClientIdentity, fetchFn?: FetchLike, now = Date.now()): Promise<McpOAuthGrant> {
  const provider = new SignInProvider(identity, pending.discovery, pending.state, pending.client, pending.codeVerifier);
  const resourceMetadataUrl = pending.resourceMetadataUrl ? new URL(pending.resourceMetadataUrl) : undefined;
  await auth(provider, {
    serverUrl: pending.serverUrl,
    authorizationCode: code,
    ...(pending.scope ? { scope: pending.scope } : {}),
    ...(resourceMetadataUrl ? { resourceMetadataUrl } : {}),
    ...(fetchFn ? { fetchFn } : {}),
  });
  if (!provider.tokens_ || !provider.client) throw new Error('the authorization server returned no tokens');
  return grantOf(provider.discovery, provider.client, provider.tokens_, now);
}

/** A grant from freshly issued tokens: when they expire, counted from `now`. */
export function grantOf(discovery: OAuthDiscoveryState, client: OAuthClientInformationMixed, tokens: OAuthTokens, now: number): McpOAuthGrant {
  return {
    discovery: discovery as unknown as Record<string, unknown>,
    client: client as McpOAuthGrant['client'],
    tokens: tokens as McpOAuthGrant['tokens'],
    ...(typeof tokens.expires_in === 'number' ? { expiresAt: now + tokens.expires_in * 1000 } : {}),
  };
}

/** The client the server's `oauth` settings pre-register, if any (no registration then). */
export function preRegisteredClient(config: McpServerConfig): Pick<OAuthClientIdentity, 'preRegistered'> {
  const oauth = config.oauth;
  if (!oauth?.clientId) return {};
  return {
    preRegistered: {
      client_id: oauth.clientId,
      ...(oauth.clientSecret ? { client_secret: oauth.clientSecret } : {}),
      ...(oauth.tokenEndpointAuthMethod ? { token_endpoint_auth_method: oauth.tokenEndpointAuthMethod } : {}),
    },
  };
}

/**
 * The client metadata DataAgent registers dynamically: the authorization server picks how the
 * client authenticates (RFC 7591's default is a secret sent with HTTP Basic).
 */
export function clientMetadataOf(identity: OAuthClientIdentity): OAuthClientMetadata {
  return {
    client_name: identity.clientName,
    redirect_uris: [identity.redirectUrl],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
  };
}

/** The client metadata document the gateway serves at `clientMetadataUrl`: a public client (it holds no secret). */
export function clientMetadataDocument(identity: OAuthClientIdentity & { clientMetadataUrl: string }): OAuthClientMetadata & { client_id: string } {
  return { client_id: identity.clientMetadataUrl, ...clientMetadataOf(identity), token_endpoint_auth_method: 'none' };
}

function withOfflineAccess(scope: string | undefined, supported: string[] | undefined): string | undefined {
  if (!scope || !supported?.includes('offline_access') || scope.split(' ').includes('offline_access')) return scope;
  return `${scope} offline_access`;
}

/**
 * The SDK's view of one sign-in step: it takes what `auth()` hands over (the authorization URL,
 * the verifier, a registration, the tokens) instead of sending a browser anywhere.
 */
class SignInProvider implements OAuthClientProvider {
  authorizationUrl?: URL;
  tokens_?: OAuthTokens;

  constructor(
    private readonly identity: OAuthClientIdentity,
    public discovery: OAuthDiscoveryState,
    private readonly state_: string,
    public client?: OAuthClientInformationMixed,
    public verifier?: string,
  ) {
    if (!client && identity.preRegistered) this.client = { ...identity.preRegistered };
  }

  get redirectUrl(): string {
    return this.identity.redirectUrl;
  }

  get clientMetadataUrl(): string | undefined {
    return this.identity.preRegistered ? undefined : this.identity.clientMetadataUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    return clientMetadataOf(this.identity);
  }

  state(): string {
    return this.state_;
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.client;
  }

  saveClientInformation(info: OAuthClientInformationMixed): void {
    this.client = info;
  }

  tokens(): OAuthTokens | undefined {
    // A sign-in starts from nothing: no refresh is tried here.
    return undefined;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.tokens_ = tokens;
  }

  redirectToAuthorization(url: URL): void {
    this.authorizationUrl = url;
  }

  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }

  codeVerifier(): string {
    if (!this.verifier) throw new Error('no PKCE verifier for this sign-in');
    return this.verifier;
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.discovery = state;
  }

  discoveryState(): OAuthDiscoveryState {
    return this.discovery;
  }
}
