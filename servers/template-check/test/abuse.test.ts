import { abuseSuite } from '@suite/test-kit/abuse';
import { target } from './conformance-target.js';

abuseSuite(target);
