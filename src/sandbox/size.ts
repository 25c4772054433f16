/**
 * How many demo conversations a sandbox holds. A module of its own so that `carectl sandbox` can
 * check its flag without loading the sandbox.
 */
export const DEMO_CONVERSATIONS = {
  /** The fixture conversations every sandbox has (FIXTURES). */
  min: 3,
  default: 600,
  /** ~3 s and ~0.5 GB to generate: past that, a sandbox is no longer a quick local tool. */
  max: 1_000_000,
} as const;
