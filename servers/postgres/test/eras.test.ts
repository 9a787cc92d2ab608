import { erasSuite } from '@suite/test-kit/eras';
import { target } from './conformance-target.js';

erasSuite(target);
