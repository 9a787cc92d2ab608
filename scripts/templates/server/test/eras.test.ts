import { erasSuite } from '@suite/test-kit/eras';
import { target } from './conformance-target.js';

// Both protocol eras against the built bin, over stdio and HTTP: a 2026-07-28 client (pinned and in
// auto mode) sees the tools, prompts and templates a 2025-11-25 client sees and gets the same answer
// to the cheap call; cache hints, 2020-12 input schemas, header checks and -32602 for unknown resources.
erasSuite(target);
