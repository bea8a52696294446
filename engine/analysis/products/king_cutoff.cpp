// PLINK 2's --king-cutoff: which samples to remove so that no pair above the cutoff is left,
// by the greedy rule of its KinshipPruneDestructive (plink2_matrix_calc.cc).
#include <algorithm>
#include <string>

#include "colflow/analysis/king.hpp"
#include "colflow/error.hpp"

namespace colflow {
namespace {

// The graph of related samples while samples are removed. A live sample's related samples
// that are not removed are exactly the pairs left: a pair goes only with one of its samples.
class related_graph {
 public:
  related_graph(std::size_t n, std::span<const std::pair<std::size_t, std::size_t>> pairs)
      : partners_(n), degree_(n, 0), removed_(n, false) {
    for (const auto& [i, j] : pairs) {
      if (i >= n || j >= n || i == j)
        throw error(errc::invalid_argument, "king_cutoff_removals: pair (" + std::to_string(i) +
                                                ", " + std::to_string(j) + ") of " +
                                                std::to_string(n) + " samples");
      partners_[i].push_back(j);
      partners_[j].push_back(i);
    }
    for (std::size_t i = 0; i < n; ++i) {
      degree_[i] = partners_[i].size();
      ones_ += degree_[i] == 1;
      live_ += degree_[i] != 0;
    }
  }

  bool done() const noexcept { return live_ == 0; }

  // The next sample to remove: the partner of the first sample with one pair left, or else
  // the first of those with the most.
  std::size_t next() const {
    if (ones_ != 0) {
      const std::size_t single = first_with_one();
      for (const std::size_t p : partners_[single])
        if (!removed_[p]) return p;
    }
    std::size_t best = 0, most = 0;
    for (std::size_t i = 0; i < degree_.size(); ++i)
      if (degree_[i] > most) {
        most = degree_[i];
        best = i;
      }
    return best;
  }

  // Removes sample v and its pairs.
  void remove(std::size_t v) {
    for (const std::size_t p : partners_[v]) {
      if (removed_[p] || degree_[p] == 0) continue;
      const std::size_t left = --degree_[p];
      if (left == 0) {
        --ones_;
        --live_;
      } else if (left == 1) {
        ++ones_;
      }
    }
    if (degree_[v] == 1) --ones_;
    degree_[v] = 0;
    removed_[v] = true;
    --live_;
  }

 private:
  std::size_t first_with_one() const {
    for (std::size_t i = 0; i < degree_.size(); ++i)
      if (degree_[i] == 1) return i;
    return 0;  // not reached: ones_ counts them
  }

  std::vector<std::vector<std::size_t>> partners_;
  std::vector<std::size_t> degree_;  // pairs left; 0 once removed
  std::vector<bool> removed_;
  std::size_t ones_ = 0, live_ = 0;  // samples with one pair left, with any
};

}  // namespace

std::vector<std::size_t> king_cutoff_removals(
    std::size_t samples, std::span<const std::pair<std::size_t, std::size_t>> related) {
  related_graph g(samples, related);
  std::vector<std::size_t> removed;
  while (!g.done()) {
    const std::size_t v = g.next();
    g.remove(v);
    removed.push_back(v);
  }
  std::sort(removed.begin(), removed.end());
  return removed;
}

}  // namespace colflow
