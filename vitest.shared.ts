/**
 * Test options every project shares (vitest does not pass the root config's
 * `test` options down to projects): generous timeouts, because the CI
 * machine has 2 cores shared by several runs and no test asserts a duration;
 * and quiet when green — console output is shown only for failing tests
 * (tests that expect warnings capture and assert them).
 */
export const sharedTest = {
  testTimeout: 60_000,
  hookTimeout: 60_000,
  silent: "passed-only"
} as const
