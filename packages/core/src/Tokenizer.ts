/**
 * The `Tokenizer` service: counts tokens in text. Exact BPE encodings for
 * families that publish them, calibrated estimators otherwise.
 * Implementations live in `Tokenizers.ts` (exact) and `Estimator.ts`.
 *
 * @since 0.1.0
 */
import { Context } from "effect"

/**
 * A token counter.
 *
 * @category models
 */
export interface Tokenizer {
  /** e.g. `o200k_base` or `estimate:anthropic`. */
  readonly name: string
  /** `exact` when counts equal the provider's tokenizer, `estimate` otherwise. */
  readonly method: "exact" | "estimate"
  /** Number of tokens in `text`. Pure; never throws. */
  readonly count: (text: string) => number
  /** The count of `text` when this tokenizer already knows it (a cache hit), without counting; optional. */
  readonly knownCount?: (text: string) => number | undefined
}

/**
 * Service tag for the {@link Tokenizer}, so tests and users swap it.
 *
 * @category services
 */
export class TokenizerService extends Context.Service<TokenizerService, Tokenizer>()(
  "@context-engine/core/Tokenizer"
) {}
