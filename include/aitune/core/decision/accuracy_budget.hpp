// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// How far a reduced-precision candidate's outputs may move from the baseline's: the accuracy
/// budget a user sets (StrategyConfig::set_accuracy_budget), and what a correctness check
/// measures of each output for it (OutputAccuracy).
///
/// Without a budget, every candidate is held to its precision's tolerance and nothing here is
/// judged. With one, a candidate that computes in a lower precision than the baseline (a bf16
/// run, a quantised model) is judged by the budget instead, over every checked sample: the worst
/// relative error of each output, its least cosine similarity, and how often the top-k of the
/// output the user names as class scores agrees with the baseline's. Its outputs must still have
/// the baseline's structure, shapes and dtypes, and NaN or Inf only where the baseline has them.
/// Full-precision candidates keep their tolerance.

#include "aitune/core/error.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace aitune {

/// How close one output came to the reference, over the samples checked. `worst_error_ratio` is
/// always measured; the rest where the checker measures them (a floating output, compared with a
/// reference).
struct OutputAccuracy {
  std::string output;  ///< where in the outputs, e.g. `output[0]`
  /// Its worst element's error as a fraction of what the tolerance allowed there (0: exact; 1: at
  /// the limit; above 1: outside the tolerance).
  double worst_error_ratio = 0.0;
  /// The worst max|actual - expected| / max|expected| (finite elements).
  std::optional<double> relative_error{};
  /// The least cosine similarity of actual and expected, each flattened (1: same direction).
  std::optional<double> cosine{};
  /// Of the rows along the last dimension (positions times samples), those where the baseline's
  /// top-1 class is among the candidate's top-k (equal scores ranked by the lower class index,
  /// as argmax ranks them; NaN above every number): measured for an output an accuracy budget
  /// takes as class scores (AccuracyBudget::measures_top_k); `top_k_rows` 0 when not measured.
  /// The rows are the reference's, whatever the candidate gave: a checker that compares the
  /// reference with itself counts them (the check's bound on what later samples can add).
  std::size_t top_k_agreed = 0;
  std::size_t top_k_rows = 0;
  /// The classes along the last dimension where top-k agreement was counted (0: not counted):
  /// a k of at least as many measures nothing.
  std::size_t top_k_classes = 0;

  /// This output's measures over one more sample (`other`, of the same output): worst of both.
  void merge(const OutputAccuracy& other) {
    worst_error_ratio = std::max(worst_error_ratio, other.worst_error_ratio);
    const auto keep = [](std::optional<double>& mine, const std::optional<double>& theirs,
                         auto worse) {
      if (theirs && (!mine || worse(*theirs, *mine))) mine = theirs;
    };
    keep(relative_error, other.relative_error, [](double a, double b) { return a > b; });
    keep(cosine, other.cosine, [](double a, double b) { return !(a >= b); });  // NaN is worst
    top_k_agreed += other.top_k_agreed;
    top_k_rows += other.top_k_rows;
    top_k_classes = std::max(top_k_classes, other.top_k_classes);
  }

  [[nodiscard]] double top_k_share() const {
    return top_k_rows == 0 ? 0.0
                           : static_cast<double>(top_k_agreed) / static_cast<double>(top_k_rows);
  }
};

/// The output taken as class scores, and how often its top-k must agree with the baseline's.
struct TopKAgreement {
  /// Its path as the report names it (`output[0]`, `output['logits']`) or its last key
  /// (`logits`, `0`); empty: the model's only output with class scores (a floating tensor with
  /// at least two classes along its last dimension).
  std::string output{};
  int k = 1;                ///< the baseline's top-1 class must be among the candidate's top k
  double min_share = 0.98;  ///< of the rows compared, in (0, 1]
};

/// A budget's verdict on one candidate's outputs: within it or not, and its figures against the
/// budget (when outside, the measures that failed and by how much first, then those it met).
struct AccuracyVerdict {
  bool within = true;
  std::string text{};
};

/// How far a reduced-precision candidate's outputs may move from the baseline's (see the file's
/// comment), checked on at least min_samples held-out samples.
class AccuracyBudget {
 public:
  /// The most an output's worst |actual - expected| may be, as a share of its largest
  /// |expected| (for a sample). In [0, 1e6].
  AccuracyBudget& set_max_relative_error(double value) {
    require(value >= 0.0 && value <= 1e6, "the relative error", value, "in [0, 1e6]");
    max_relative_error_ = value;
    return *this;
  }
  [[nodiscard]] const std::optional<double>& max_relative_error() const noexcept {
    return max_relative_error_;
  }

  /// The least cosine similarity an output may have with the baseline's (for a sample). In
  /// [-1, 1].
  AccuracyBudget& set_min_cosine(double value) {
    require(value >= -1.0 && value <= 1.0, "the cosine similarity", value, "in [-1, 1]");
    min_cosine_ = value;
    return *this;
  }
  [[nodiscard]] const std::optional<double>& min_cosine() const noexcept { return min_cosine_; }

  /// How often the class scores' top-k must agree with the baseline's.
  AccuracyBudget& set_top_k(TopKAgreement agreement) {
    if (agreement.k < 1) {
      throw ConfigError(fmt::format("the top-k agreement needs k >= 1, got {}", agreement.k));
    }
    require(agreement.min_share > 0.0 && agreement.min_share <= 1.0, "the top-k agreement",
            agreement.min_share, "a share in (0, 1]");
    top_k_ = std::move(agreement);
    return *this;
  }
  [[nodiscard]] const std::optional<TopKAgreement>& top_k() const noexcept { return top_k_; }

  /// The fewest samples the budget is checked on (default 100): a tuning with fewer throws, and
  /// the baseline's pass never checks fewer to fit the time budget.
  AccuracyBudget& set_min_samples(std::size_t count) {
    if (count == 0) throw ConfigError("an accuracy budget is checked on at least one sample");
    min_samples_ = count;
    return *this;
  }
  [[nodiscard]] std::size_t min_samples() const noexcept { return min_samples_; }

  /// Whether it measures anything (a budget with no measure admits nothing it can judge).
  [[nodiscard]] bool has_measure() const noexcept {
    return max_relative_error_ || min_cosine_ || top_k_;
  }

  /// What the budget cannot see, for a warning; empty when nothing. Cosine similarity and top-k
  /// agreement are blind to scale: an output 1.5 times the baseline's (an IR whose weights were
  /// scaled so) has cosine 1 and the same top classes. Without a relative error bound such a
  /// candidate passes; with a loose one (relative=0.5 still stops a factor of 1.5) it does not.
  /// Said rather than implied: a bound the user did not set would refuse what their budget
  /// allows.
  [[nodiscard]] std::string blind_spot() const {
    if (!has_measure() || max_relative_error_) return {};
    return fmt::format("the accuracy budget ({}) does not see an output's scale: an output "
                       "1.5 times the baseline's meets it; bound the relative error too to "
                       "refuse that (relative=0.5 is loose and still does)",
                       min_cosine_ && top_k_ ? "cosine and top-k agreement"
                       : min_cosine_         ? "cosine"
                                             : "top-k agreement");
  }

  /// Whether a checker should count top-k agreement for the output at `path`: it is the named
  /// class scores, or any output when none is named (judge() then insists on a single one).
  [[nodiscard]] bool measures_top_k(std::string_view path) const {
    return top_k_ && (top_k_->output.empty() || names(top_k_->output, path));
  }

  /// E.g. "cosine >= 0.999; top-1 agreement >= 98 % (the class scores); on >= 100 samples".
  [[nodiscard]] std::string describe() const {
    std::vector<std::string> parts;
    if (max_relative_error_)
      parts.push_back(fmt::format("relative error <= {:.4g}", *max_relative_error_));
    if (min_cosine_) parts.push_back(fmt::format("cosine >= {:.6g}", *min_cosine_));
    if (top_k_) {
      parts.push_back(fmt::format("top-{} agreement >= {:.4g} % ({})", top_k_->k,
                                  top_k_->min_share * 100.0,
                                  top_k_->output.empty() ? "the class scores" : top_k_->output));
    }
    parts.push_back(fmt::format("on >= {} samples", min_samples_));
    return join(parts);
  }

  /// Whether outputs measured over some of the samples already miss a measure that the samples
  /// still to come cannot mend, so that the check may stop there: the worst relative error and
  /// the least cosine only get worse; top-k agreement is a share, which has missed once even
  /// every row still to come agreeing would leave it short. `to_come` holds, per output (by
  /// path), the class scores' rows in the samples not yet checked (top_k_rows); an output with
  /// none there is not bounded, and its agreement never stops a check.
  [[nodiscard]] bool already_missed(std::span<const OutputAccuracy> outputs,
                                    std::span<const OutputAccuracy> to_come = {}) const {
    return std::any_of(outputs.begin(), outputs.end(), [&](const OutputAccuracy& output) {
      return (max_relative_error_ && output.relative_error &&
              !(*output.relative_error <= *max_relative_error_)) ||
             (min_cosine_ && output.cosine && !(*output.cosine >= *min_cosine_)) ||
             top_k_out_of_reach(output, to_come);
    });
  }

  /// Whether `output`'s top-k agreement stays under the budget's share even if each of its rows
  /// in `to_come` agrees.
  [[nodiscard]] bool top_k_out_of_reach(const OutputAccuracy& output,
                                        std::span<const OutputAccuracy> to_come) const {
    if (!top_k_ || output.top_k_rows == 0 || !measures_top_k(output.output)) return false;
    const auto rest = std::find_if(to_come.begin(), to_come.end(), [&](const OutputAccuracy& o) {
      return o.output == output.output;
    });
    if (rest == to_come.end()) return false;
    const double at_best = static_cast<double>(output.top_k_agreed + rest->top_k_rows) /
                           static_cast<double>(output.top_k_rows + rest->top_k_rows);
    return at_best < top_k_->min_share;
  }

  /// Judges a candidate's outputs, measured over every checked sample. Outputs the checker did
  /// not measure (integers, compared exactly) are left out.
  [[nodiscard]] AccuracyVerdict judge(std::span<const OutputAccuracy> outputs) const {
    std::vector<std::string> failed;
    std::vector<std::string> figures;
    if (max_relative_error_) {
      if (const OutputAccuracy* worst = worst_of(outputs, &OutputAccuracy::relative_error, true)) {
        const double value = *worst->relative_error;
        const bool ok = value <= *max_relative_error_;
        (ok ? figures : failed)
            .push_back(fmt::format("{}: relative error {:.3g} {} {:.4g}", worst->output, value,
                                   ok ? "<=" : ">", *max_relative_error_));
      }
    }
    if (min_cosine_) {
      if (const OutputAccuracy* worst = worst_of(outputs, &OutputAccuracy::cosine, false)) {
        const double value = *worst->cosine;
        const bool ok = value >= *min_cosine_;
        (ok ? figures : failed)
            .push_back(fmt::format("{}: cosine {:.6f} {} {:.6g}", worst->output, value,
                                   ok ? ">=" : "<", *min_cosine_));
      }
    }
    if (top_k_) judge_top_k(outputs, failed, figures);
    if (!failed.empty()) {
      return {false, figures.empty() ? join(failed)
                                     : fmt::format("{} (within: {})", join(failed), join(figures))};
    }
    return {true,
            figures.empty() ? std::string("nothing it measures was measured") : join(figures)};
  }

 private:
  static void require(bool ok, std::string_view what, double value, std::string_view range) {
    if (!ok) {
      throw ConfigError(
          fmt::format("{} in an accuracy budget must be {}, got {}", what, range, value));
    }
  }

  /// `path` is the output `name` names: the whole path, or its last index or key.
  [[nodiscard]] static bool names(std::string_view name, std::string_view path) {
    return name == path || path.ends_with(fmt::format("[{}]", name)) ||
           path.ends_with(fmt::format("['{}']", name));
  }

  [[nodiscard]] static std::string join(const std::vector<std::string>& parts) {
    return fmt::format("{}", fmt::join(parts, "; "));
  }

  /// The output whose `measure` is worst (highest when `higher_is_worse`; NaN always worst), or
  /// null when none was measured.
  [[nodiscard]] static const OutputAccuracy*
  worst_of(std::span<const OutputAccuracy> outputs, std::optional<double> OutputAccuracy::*measure,
           bool higher_is_worse) {
    const OutputAccuracy* worst = nullptr;
    for (const OutputAccuracy& output : outputs) {
      const std::optional<double>& value = output.*measure;
      if (!value) continue;
      if (worst == nullptr || std::isnan(*value)) {
        worst = &output;
        if (std::isnan(*value)) return worst;
        continue;
      }
      const double known = *(worst->*measure);
      if (higher_is_worse ? *value > known : *value < known) worst = &output;
    }
    return worst;
  }

  void judge_top_k(std::span<const OutputAccuracy> outputs, std::vector<std::string>& failed,
                   std::vector<std::string>& figures) const {
    std::vector<const OutputAccuracy*> scored;
    std::vector<std::string> paths;
    for (const OutputAccuracy& output : outputs) {
      paths.push_back(output.output);
      if (output.top_k_rows > 0 && measures_top_k(output.output)) scored.push_back(&output);
    }
    const std::string named =
        top_k_->output.empty() ? std::string("class scores") : "'" + top_k_->output + "'";
    if (scored.size() != 1) {
      failed.push_back(
          scored.empty()
              ? fmt::format(
                    "no output with {} to count top-{} agreement on (a floating tensor with "
                    "at least two classes along its last dimension) among {}",
                    named, top_k_->k, join(paths))
              : fmt::format("{} outputs have class scores; name the one whose top-{} agreement "
                            "counts (TopKAgreement::output, or scores= on the command line)",
                            scored.size(), top_k_->k));
      return;
    }
    const OutputAccuracy& scores = *scored.front();
    if (scores.top_k_classes > 0 && static_cast<std::size_t>(top_k_->k) >= scores.top_k_classes) {
      failed.push_back(fmt::format("{}: top-{} agreement measures nothing on {} classes (every "
                                   "row agrees whatever the scores): give a k below {}",
                                   scores.output, top_k_->k, scores.top_k_classes,
                                   scores.top_k_classes));
      return;
    }
    const double share = scores.top_k_share();
    const bool ok = share >= top_k_->min_share;
    (ok ? figures : failed)
        .push_back(fmt::format("{}: top-{} agreement {:.4g} % ({} of {}) {} {:.4g} %",
                               scores.output, top_k_->k, share * 100.0, scores.top_k_agreed,
                               scores.top_k_rows, ok ? ">=" : "<", top_k_->min_share * 100.0));
  }

  std::optional<double> max_relative_error_{};
  std::optional<double> min_cosine_{};
  std::optional<TopKAgreement> top_k_{};
  std::size_t min_samples_ = 100;
};

}  // namespace aitune
