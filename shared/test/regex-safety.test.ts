import { describe, expect, it } from 'vitest';
import { nestedQuantifier } from '../src/index.js';

describe('nestedQuantifier', () => {
  it('names the repeated group that itself repeats', () => {
    expect(nestedQuantifier('(a+)+$')).toBe('(a+)+');
    expect(nestedQuantifier('^(\\w*)*x')).toBe('(\\w*)*');
    expect(nestedQuantifier('(x+y?){2,}')).toBe('(x+y?){2,}');
    expect(nestedQuantifier('((ab)+c)*')).toBe('((ab)+c)*');
  });

  it('lets ordinary patterns through, including quantifiers inside classes and escapes', () => {
    for (const ok of ['ERROR \\d+', '(ab)+', 'a+b+c*', '[+*]+', '\\(a+\\)+', '(?:GET|POST) /api/\\w+', 'x{2,3}', '(a{2})+']) {
      expect(nestedQuantifier(ok)).toBeUndefined();
    }
  });
});
