/**
 * The simulation's single source of randomness: job ids, trigger ids, savepoint suffixes, pod name
 * suffixes. Injected as a plain `() => number` in [0, 1) so tests can make every id reproducible
 * with `seededRandom(seed)`.
 */
export type RandomSource = () => number;

/** A small deterministic PRNG (mulberry32). Same seed → same sequence. */
export function seededRandom(seed: number): RandomSource {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `length` lower-case hexadecimal characters. Flink's JobID/TriggerId are 32 of them. */
export function randomHex(random: RandomSource, length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += Math.floor(random() * 16).toString(16);
  return out;
}

// The alphabet Kubernetes uses for generated name suffixes (apimachinery util/rand: no vowels, no 0/1/3).
const NAME_SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** A 5-character suffix as the ReplicaSet controller appends to pod names. */
export function randomNameSuffix(random: RandomSource, length = 5): string {
  let out = '';
  for (let i = 0; i < length; i++) out += NAME_SUFFIX_ALPHABET[Math.floor(random() * NAME_SUFFIX_ALPHABET.length)];
  return out;
}
