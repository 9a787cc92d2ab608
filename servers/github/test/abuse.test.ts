import { abuseSuite } from '@suite/shared/abuse';
import { target } from './conformance-target.js';

abuseSuite(target);
