import { fuzzSuite } from '@suite/test-kit/fuzz';
import { target } from './conformance-target.js';

fuzzSuite(target);
