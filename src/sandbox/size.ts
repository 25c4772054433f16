/**
 * How many demo conversations a sandbox holds, and how their sort dates lie. A module of its own
 * so that `carectl sandbox` can check its flags without loading the sandbox.
 */
export const DEMO_CONVERSATIONS = {
  /** The fixture conversations every sandbox has (FIXTURES). */
  min: 3,
  default: 600,
  /** ~3 s and ~0.5 GB to generate: past that, a sandbox is no longer a quick local tool. */
  max: 1_000_000,
} as const;

/**
 * Shapes of sort dates the spec allows and a list must survive, to rehearse them: the year
 * before the anchor (the default), a year ahead of it, half at 1970-01-01, bursts of hundreds at
 * one second, clusters years apart, all in the last six hours.
 */
export const DATE_SHAPES = ['year', 'future', '1970', 'bursts', 'gaps', 'hours'] as const;
export type DateShape = (typeof DATE_SHAPES)[number];
