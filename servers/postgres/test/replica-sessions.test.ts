import { replicaSessionsSuite } from '@suite/test-kit/replica-sessions';
import { target } from './conformance-target.js';

replicaSessionsSuite(target);
