// The eight lanes of logistic_sums_body.inl as one generic vector of GCC's vector extension,
// for the portable and AVX-512 paths: included inside each one's anonymous namespace. On
// AVX-512 a vector is one register; on the portable path, four SSE2 registers (or two NEON
// ones). The AVX2 path has its own lanes (logistic_lanes_avx2.inl).

typedef double lane_values __attribute__((vector_size(64)));
typedef long long lane_words __attribute__((vector_size(64)));

// Eight doubles, and eight 64-bit words (bit patterns and comparison masks). In structs: a
// 64-byte struct is passed in memory on every x86-64 target, so no helper below has an
// eight-double vector in its signature, which clang refuses on targets without AVX-512 even
// where the helper is inlined (each one is, into the function of its path).
struct lanes {
  lane_values v;
};
struct lane_bits {
  lane_words v;
};

COLFLOW_INLINE lanes operator+(const lanes& a, const lanes& b) { return {a.v + b.v}; }
COLFLOW_INLINE lanes operator-(const lanes& a, const lanes& b) { return {a.v - b.v}; }
COLFLOW_INLINE lanes operator*(const lanes& a, const lanes& b) { return {a.v * b.v}; }
COLFLOW_INLINE lanes operator/(const lanes& a, const lanes& b) { return {a.v / b.v}; }
COLFLOW_INLINE lanes operator-(const lanes& a) { return {-a.v}; }
COLFLOW_INLINE lane_bits operator<(const lanes& a, const lanes& b) {
  return {reinterpret_cast<lane_words>(a.v < b.v)};
}
COLFLOW_INLINE lane_bits operator>(const lanes& a, const lanes& b) { return b < a; }
COLFLOW_INLINE lane_bits operator>=(const lanes& a, const lanes& b) {
  return {reinterpret_cast<lane_words>(a.v >= b.v)};
}
// Lane by lane, a where the mask is set, b where it is clear.
COLFLOW_INLINE lanes select(const lane_bits& mask, const lanes& a, const lanes& b) {
  return {mask.v ? a.v : b.v};
}
COLFLOW_INLINE lane_bits operator+(const lane_bits& a, const lane_bits& b) { return {a.v + b.v}; }
COLFLOW_INLINE lane_bits operator-(const lane_bits& a, const lane_bits& b) { return {a.v - b.v}; }
COLFLOW_INLINE lane_bits operator|(const lane_bits& a, const lane_bits& b) { return {a.v | b.v}; }
COLFLOW_INLINE lane_bits operator<<(const lane_bits& a, int bits) { return {a.v << bits}; }
COLFLOW_INLINE lane_bits bits_of(const lanes& a) {
  lane_bits b;
  std::memcpy(&b.v, &a.v, sizeof b.v);
  return b;
}
COLFLOW_INLINE lanes lanes_of(const lane_bits& b) {
  lanes a;
  std::memcpy(&a.v, &b.v, sizeof a.v);
  return a;
}

// v in every lane: lane 0's value shuffled into all (GCC builds an initialiser list of a
// value loaded from memory lane by lane).
template <class V, class T>
COLFLOW_INLINE V splat(T v) {
  using vector = decltype(V::v);
#if defined(__clang__)
  return {__builtin_shufflevector(vector{v}, vector{v}, 0, 0, 0, 0, 0, 0, 0, 0)};
#else
  return {__builtin_shuffle(vector{v}, lane_words{})};
#endif
}

COLFLOW_INLINE lanes load(const double* p) {
  lanes v;
  std::memcpy(&v.v, p, sizeof v.v);
  return v;
}

COLFLOW_INLINE void store(double* p, const lanes& v) { std::memcpy(p, &v.v, sizeof v.v); }

COLFLOW_INLINE double lanes_total(const lanes& l) {
  const lane_values& v = l.v;
  return ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7]));
}
