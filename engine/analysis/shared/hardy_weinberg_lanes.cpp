// Four rows of the diploid Hardy-Weinberg test summed side by side
// (hardy_weinberg_lanes_internal.hpp).
#include "analysis/shared/hardy_weinberg_lanes_internal.hpp"
#include "simd/cpu_dispatch_internal.hpp"

namespace colflow::detail {

#if COLFLOW_X86_DISPATCH
namespace {

// A side of four walks, one in each lane: the heterozygotes h, the homozygotes x and y, the
// last term, and the sum with its compensation (Neumaier's, as compensated_sum adds a term no
// larger than the sum). The lanes step on together, whether or not their walk has ended: a
// lane's sum is taken at its last step (`sum`, `compensation`), not frozen in the loop, so
// that no step waits on the test of the one before (as a scalar walk does not, branching on
// it by prediction).
struct side {
  __m256d h, x, y, term, running, running_compensation, sum, compensation;
};

// Steps every lane of `w` by `ratio` (the next term over this one) to h, x, y; the lanes not
// `done` take the new sum as theirs. Returns the lanes done after it: those done before, and
// those whose new term no longer matters or whose row ends at the new h (`more`: whether a
// step from h stays in the row). A lane done steps on with the others, on values that no longer
// count (its ratios turn 0 at its row's ends, then negative).
template <class More>
[[gnu::target("avx2"), gnu::always_inline]] inline __m256d step(side& w, __m256d done,
                                                                __m256d ratio, __m256d h, __m256d x,
                                                                __m256d y, More more) noexcept {
  w.term = _mm256_mul_pd(w.term, ratio);
  const __m256d total = _mm256_add_pd(w.running, w.term);
  w.running_compensation =
      _mm256_add_pd(w.running_compensation, _mm256_add_pd(_mm256_sub_pd(w.running, total), w.term));
  w.running = total;
  w.h = h, w.x = x, w.y = y;
  w.sum = _mm256_blendv_pd(w.running, w.sum, done);
  w.compensation = _mm256_blendv_pd(w.running_compensation, w.compensation, done);
  const __m256d value = _mm256_add_pd(w.running, w.running_compensation);
  const __m256d negligible =
      _mm256_cmp_pd(w.term, _mm256_mul_pd(_mm256_set1_pd(negligible_term), value), _CMP_LT_OQ);
  const __m256d ends = _mm256_andnot_pd(more(h), _mm256_castsi256_pd(_mm256_set1_epi64x(-1)));
  return _mm256_or_pd(done, _mm256_or_pd(negligible, ends));
}

// Whether a step up from h stays in the row (h + 2 ≤ last), and a step down (h − 2 ≥ first).
struct below_last_of {
  __m256d last;
  [[gnu::target("avx2"), gnu::always_inline]] __m256d operator()(__m256d h) const noexcept {
    return _mm256_cmp_pd(_mm256_add_pd(h, _mm256_set1_pd(2)), last, _CMP_LE_OQ);
  }
};
struct above_first_of {
  __m256d first;
  [[gnu::target("avx2"), gnu::always_inline]] __m256d operator()(__m256d h) const noexcept {
    return _mm256_cmp_pd(_mm256_sub_pd(h, _mm256_set1_pd(2)), first, _CMP_GE_OQ);
  }
};

[[gnu::target("avx2")]] void sums_avx2(const row_walk_start* rows, std::size_t count,
                                       double* sums) noexcept {
  alignas(32) double mode[4], hom1[4], hom2[4], first[4], last[4];
  for (std::size_t k = 0; k < 4; ++k) {
    const row_walk_start& r = rows[k < count ? k : 0];
    mode[k] = r.mode, hom1[k] = r.hom1, hom2[k] = r.hom2;
    first[k] = k < count ? r.first : r.mode;  // a lane without a row takes no step
    last[k] = k < count ? r.last : r.mode;
  }
  const __m256d one = _mm256_set1_pd(1), two = _mm256_set1_pd(2), four = _mm256_set1_pd(4);
  const __m256d lo = _mm256_load_pd(first), hi = _mm256_load_pd(last);
  const below_last_of below_last{hi};
  const above_first_of above_first{lo};
  const side start{_mm256_load_pd(mode),
                   _mm256_load_pd(hom1),
                   _mm256_load_pd(hom2),
                   one,
                   one,
                   _mm256_setzero_pd(),
                   one,
                   _mm256_setzero_pd()};
  // Up: term *= 4xy / ((h + 1)(h + 2)) while h + 2 ≤ last.
  side w = start;
  const __m256d all = _mm256_castsi256_pd(_mm256_set1_epi64x(-1));
  for (__m256d done = _mm256_andnot_pd(below_last(w.h), all); _mm256_movemask_pd(done) != 0xf;) {
    const __m256d ratio =
        _mm256_div_pd(_mm256_mul_pd(_mm256_mul_pd(four, w.x), w.y),
                      _mm256_mul_pd(_mm256_add_pd(w.h, one), _mm256_add_pd(w.h, two)));
    done = step(w, done, ratio, _mm256_add_pd(w.h, two), _mm256_sub_pd(w.x, one),
                _mm256_sub_pd(w.y, one), below_last);
  }
  // Down, into the same sum: term *= h(h − 1) / (4(x + 1)(y + 1)) while h − 2 ≥ first.
  const side up = w;
  w = start;
  w.running = w.sum = up.sum;
  w.running_compensation = w.compensation = up.compensation;
  for (__m256d done = _mm256_andnot_pd(above_first(w.h), all); _mm256_movemask_pd(done) != 0xf;) {
    const __m256d ratio = _mm256_div_pd(
        _mm256_mul_pd(w.h, _mm256_sub_pd(w.h, one)),
        _mm256_mul_pd(_mm256_mul_pd(four, _mm256_add_pd(w.x, one)), _mm256_add_pd(w.y, one)));
    done = step(w, done, ratio, _mm256_sub_pd(w.h, two), _mm256_add_pd(w.x, one),
                _mm256_add_pd(w.y, one), above_first);
  }
  alignas(32) double value[4];
  _mm256_store_pd(value, _mm256_add_pd(w.sum, w.compensation));
  for (std::size_t k = 0; k < count; ++k) sums[k] = value[k];
}

}  // namespace
#endif

bool row_sums_in_lanes(const row_walk_start* rows, std::size_t count, double* sums) noexcept {
#if COLFLOW_X86_DISPATCH
  if (count > 0 && count <= 4 && cpu_has_avx2_fma()) {
    sums_avx2(rows, count, sums);
    return true;
  }
#endif
  (void)rows, (void)count, (void)sums;
  return false;
}

}  // namespace colflow::detail
