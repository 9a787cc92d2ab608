export { ProtectedResource, AuthorizationServerError, checkPublicUrl, type OAuthOptions, type GateOutcome, type Refusal } from './protected-resource.js';
export { AccessTokenVerifier, InvalidToken, AuthorizationUnavailable, ACCEPTED_ALGORITHMS, type VerifiedToken, type AccessTokenVerifierOptions, type IntrospectionOptions } from './access-tokens.js';
export { discoverAuthorizationServer, metadataUrls, type AuthorizationServerMetadata } from './authorization-server.js';
export { serverScopes, allScopes, canRead, canWrite, grantedScopes, type ServerScopes } from './scopes.js';
export { bindingOf, oauthGrantOf, principalKey, type Principal, type OAuthGrant } from './principal.js';
export { MemorySecretStore, SecretSealer, SecretStoreUnavailable, type SecretStore } from './secret-store.js';
export { RedisSecretStore } from './redis-secret-store.js';
