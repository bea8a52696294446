// The eight lanes of logistic_sums_body.inl as two 256-bit registers, for the AVX2 path:
// included by logistic_sums.cpp inside the AVX2 path's namespace, where these names hide the
// generic eight-lane vectors of GCC's vector extension. On a target without 512-bit registers
// the compiler lowers those generic vectors piecemeal (a splat or a blend through memory, lane
// by lane), so this path spells every operation as its AVX2 instruction instead.
//
// Each operation is the same IEEE operation per lane as the generic one: lanes 0-3 in `low`,
// 4-7 in `high`; comparisons give all-ones or all-zeros lanes, as the vector extension's do,
// so a blend on the sign bit selects as its `?:`; and the lanes add in the same order. So the
// path's bits are the other paths' bits (tests/vector_path_test.cpp).

struct lanes {
  __m256d low, high;
};
struct lane_bits {
  __m256i low, high;
};

#define COLFLOW_LANES(op, a, b) \
  lanes { op((a).low, (b).low), op((a).high, (b).high) }
#define COLFLOW_BITS(op, a, b) \
  lane_bits { op((a).low, (b).low), op((a).high, (b).high) }

COLFLOW_PATH COLFLOW_INLINE lanes operator+(const lanes& a, const lanes& b) {
  return COLFLOW_LANES(_mm256_add_pd, a, b);
}
COLFLOW_PATH COLFLOW_INLINE lanes operator-(const lanes& a, const lanes& b) {
  return COLFLOW_LANES(_mm256_sub_pd, a, b);
}
COLFLOW_PATH COLFLOW_INLINE lanes operator*(const lanes& a, const lanes& b) {
  return COLFLOW_LANES(_mm256_mul_pd, a, b);
}
COLFLOW_PATH COLFLOW_INLINE lanes operator/(const lanes& a, const lanes& b) {
  return COLFLOW_LANES(_mm256_div_pd, a, b);
}
// The sign bit flipped, as the vector extension's negation.
COLFLOW_PATH COLFLOW_INLINE lanes operator-(const lanes& a) {
  const __m256d sign = _mm256_set1_pd(-0.0);
  return {_mm256_xor_pd(a.low, sign), _mm256_xor_pd(a.high, sign)};
}

COLFLOW_PATH COLFLOW_INLINE lane_bits mask_of(__m256d low, __m256d high) {
  return {_mm256_castpd_si256(low), _mm256_castpd_si256(high)};
}
COLFLOW_PATH COLFLOW_INLINE lane_bits operator<(const lanes& a, const lanes& b) {
  return mask_of(_mm256_cmp_pd(a.low, b.low, _CMP_LT_OQ),
                 _mm256_cmp_pd(a.high, b.high, _CMP_LT_OQ));
}
COLFLOW_PATH COLFLOW_INLINE lane_bits operator>(const lanes& a, const lanes& b) { return b < a; }
COLFLOW_PATH COLFLOW_INLINE lane_bits operator>=(const lanes& a, const lanes& b) {
  return mask_of(_mm256_cmp_pd(a.low, b.low, _CMP_GE_OQ),
                 _mm256_cmp_pd(a.high, b.high, _CMP_GE_OQ));
}

// Lane by lane, a where the mask is set, b where it is clear.
COLFLOW_PATH COLFLOW_INLINE lanes select(const lane_bits& mask, const lanes& a, const lanes& b) {
  return {_mm256_blendv_pd(b.low, a.low, _mm256_castsi256_pd(mask.low)),
          _mm256_blendv_pd(b.high, a.high, _mm256_castsi256_pd(mask.high))};
}

COLFLOW_PATH COLFLOW_INLINE lane_bits operator+(const lane_bits& a, const lane_bits& b) {
  return COLFLOW_BITS(_mm256_add_epi64, a, b);
}
COLFLOW_PATH COLFLOW_INLINE lane_bits operator-(const lane_bits& a, const lane_bits& b) {
  return COLFLOW_BITS(_mm256_sub_epi64, a, b);
}
COLFLOW_PATH COLFLOW_INLINE lane_bits operator|(const lane_bits& a, const lane_bits& b) {
  return COLFLOW_BITS(_mm256_or_si256, a, b);
}
COLFLOW_PATH COLFLOW_INLINE lane_bits operator<<(const lane_bits& a, int bits) {
  return {_mm256_slli_epi64(a.low, bits), _mm256_slli_epi64(a.high, bits)};
}

#undef COLFLOW_LANES
#undef COLFLOW_BITS

COLFLOW_PATH COLFLOW_INLINE lane_bits bits_of(const lanes& a) { return mask_of(a.low, a.high); }
COLFLOW_PATH COLFLOW_INLINE lanes lanes_of(const lane_bits& b) {
  return {_mm256_castsi256_pd(b.low), _mm256_castsi256_pd(b.high)};
}

// v in every lane.
template <class V>
COLFLOW_PATH COLFLOW_INLINE V splat(double v) {
  static_assert(std::is_same_v<V, lanes>);
  return {_mm256_set1_pd(v), _mm256_set1_pd(v)};
}
template <class V>
COLFLOW_PATH COLFLOW_INLINE V splat(long long v) {
  static_assert(std::is_same_v<V, lane_bits>);
  return {_mm256_set1_epi64x(v), _mm256_set1_epi64x(v)};
}

COLFLOW_PATH COLFLOW_INLINE lanes load(const double* p) {
  return {_mm256_loadu_pd(p), _mm256_loadu_pd(p + 4)};
}
COLFLOW_PATH COLFLOW_INLINE void store(double* p, const lanes& v) {
  _mm256_storeu_pd(p, v.low);
  _mm256_storeu_pd(p + 4, v.high);
}

// ((0 + 1) + (2 + 3)) + ((4 + 5) + (6 + 7)), as the generic lanes_total.
COLFLOW_PATH COLFLOW_INLINE double lanes_total(const lanes& l) {
  alignas(32) double v[8];
  _mm256_store_pd(v, l.low);
  _mm256_store_pd(v + 4, l.high);
  return ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7]));
}

COLFLOW_PATH COLFLOW_INLINE lanes fused(const lanes& a, const lanes& b, const lanes& c) {
  return {_mm256_fmadd_pd(a.low, b.low, c.low), _mm256_fmadd_pd(a.high, b.high, c.high)};
}
