import { defineConfig } from 'vitest/config';
import { suiteTestDefaults } from './src/vitest.js';

export default defineConfig({
  test: { ...suiteTestDefaults },
});
