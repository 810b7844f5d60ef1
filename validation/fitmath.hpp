// Statistics for calibration and validation: least squares with standard errors (Eigen), the
// through-the-model secant fit of one parameter, Spearman rank correlation, MAPE.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace gtsim::validation {

double mean(const std::vector<double>& v);
double stddev(const std::vector<double>& v);  // sample standard deviation (n - 1)
double median(std::vector<double> v);

// y = a + b x by least squares, with standard errors from the residuals.
struct LineFit {
  double a = 0, b = 0, se_a = 0, se_b = 0, rms = 0;
  size_t n = 0;
};
LineFit fit_line(const std::vector<double>& x, const std::vector<double>& y);

// Spearman rank correlation (average ranks for ties); NaN when n < 3 or a side is constant.
double spearman(const std::vector<double>& a, const std::vector<double>& b);

// Spearman at a measurement's resolution: two points whose values differ by no more than
// rel_tol (relative, per point; the pair uses the larger of the two) are tied, on both sides.
// Ranks are fuzzy midranks: 1 + (points below and not tied) + (points tied) / 2, which are the usual
// average ranks when the ties form clean groups. NaN as spearman().
double spearman_resolved(const std::vector<double>& a, const std::vector<double>& b,
                         const std::vector<double>& rel_tol);

// The response of simulated observables to one parameter, probed at two values (and refined):
// y_i(p) ~ c_i + d_i g(p) with g the identity or 1/p. Solves for the p that best reproduces the
// measured y_i (least squares over i, weighted by 1/y_i^2, i.e. on relative error).
struct ResponseFit {
  double p = 0;                  // fitted value
  double se = 0;                 // standard error (residual scatter + measurement spread, delta method)
  double verify_err = 0;         // max relative error of the verifying simulation at p (fit residual)
  std::vector<double> sim_at_p;  // the verifying simulation's observables
  std::vector<double> loo_err;   // leave-one-point-out: relative error predicting point i from the rest
  int model_runs = 0;
  std::string note;
};
enum class Response { kLinear, kInverse };
// simulate(p) returns the observables at parameter value p (one per measured point).
// meas_spread: relative spread of repeats per point (used in se). p0, p1: the two probe values.
ResponseFit fit_through_model(const std::function<std::vector<double>(double)>& simulate,
                              const std::vector<double>& measured, const std::vector<double>& meas_spread, double p0,
                              double p1, Response r, double lo, double hi, int max_iter = 3);

}  // namespace gtsim::validation
