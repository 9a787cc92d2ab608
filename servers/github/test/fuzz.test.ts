import { fuzzSuite } from '@suite/shared/fuzz';
import { target } from './conformance-target.js';

fuzzSuite(target);
