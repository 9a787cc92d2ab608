// @suite/shared/replicas: what replicas share through Redis. A subpath of its own so that a server
// that never joins replicas does not load the Redis client at start-up.
export { RedisLink, UNAVAILABLE, type Answer } from './redis-link.js';
export { RedisChangeRelay } from './redis-relay.js';
export { RedisSessionDirectory, type SessionRecord } from './session-directory.js';
export { RedisSharedLimits } from './redis-limits.js';
