#include "validation/fitmath.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <numeric>

namespace gtsim::validation {

double mean(const std::vector<double>& v) {
  if (v.empty()) return std::nan("");
  return std::accumulate(v.begin(), v.end(), 0.0) / double(v.size());
}

double stddev(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  double m = mean(v), s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / double(v.size() - 1));
}

double median(std::vector<double> v) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

LineFit fit_line(const std::vector<double>& x, const std::vector<double>& y) {
  LineFit f;
  f.n = x.size();
  if (x.size() < 2 || x.size() != y.size()) return f;
  Eigen::MatrixXd A(x.size(), 2);
  Eigen::VectorXd Y(x.size());
  for (size_t i = 0; i < x.size(); ++i) A(i, 0) = 1, A(i, 1) = x[i], Y(i) = y[i];
  Eigen::Vector2d beta = A.colPivHouseholderQr().solve(Y);
  f.a = beta(0);
  f.b = beta(1);
  Eigen::VectorXd r = Y - A * beta;
  f.rms = std::sqrt(r.squaredNorm() / double(x.size()));
  if (x.size() > 2) {
    double s2 = r.squaredNorm() / double(x.size() - 2);
    Eigen::Matrix2d cov = s2 * (A.transpose() * A).inverse();
    f.se_a = std::sqrt(std::max(0.0, cov(0, 0)));
    f.se_b = std::sqrt(std::max(0.0, cov(1, 1)));
  }
  return f;
}

namespace {
std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<size_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (size_t i = 0; i < idx.size();) {
    size_t j = i;
    while (j + 1 < idx.size() && v[idx[j + 1]] == v[idx[i]]) ++j;
    for (size_t k = i; k <= j; ++k) r[idx[k]] = 0.5 * double(i + j) + 1;
    i = j + 1;
  }
  return r;
}

std::vector<double> resolved_ranks(const std::vector<double>& v, const std::vector<double>& rel_tol) {
  std::vector<double> r(v.size(), 1);
  for (size_t i = 0; i < v.size(); ++i)
    for (size_t j = 0; j < v.size(); ++j) {
      if (i == j) continue;
      double tol = std::max(rel_tol[i], rel_tol[j]) * std::max(std::fabs(v[i]), std::fabs(v[j]));
      if (std::fabs(v[i] - v[j]) <= tol)
        r[i] += 0.5;
      else if (v[j] < v[i])
        r[i] += 1;
    }
  return r;
}

double rank_correlation(const std::vector<double>& ra, const std::vector<double>& rb) {
  double ma = mean(ra), mb = mean(rb), sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < ra.size(); ++i) {
    sab += (ra[i] - ma) * (rb[i] - mb);
    saa += (ra[i] - ma) * (ra[i] - ma);
    sbb += (rb[i] - mb) * (rb[i] - mb);
  }
  if (saa == 0 || sbb == 0) return std::nan("");
  return sab / std::sqrt(saa * sbb);
}
}  // namespace

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() < 3 || a.size() != b.size()) return std::nan("");
  return rank_correlation(ranks(a), ranks(b));
}

double spearman_resolved(const std::vector<double>& a, const std::vector<double>& b,
                         const std::vector<double>& rel_tol) {
  if (a.size() < 3 || a.size() != b.size() || rel_tol.size() != a.size()) return std::nan("");
  return rank_correlation(resolved_ranks(a, rel_tol), resolved_ranks(b, rel_tol));
}

namespace {
double g_of(double p, Response r) { return r == Response::kInverse ? 1.0 / p : p; }
double g_inv(double g, Response r) { return r == Response::kInverse ? 1.0 / g : g; }

// Weighted least squares for g given y_i ~ c_i + d_i g; weights 1/m_i^2. Returns NaN when degenerate.
double solve_g(const std::vector<double>& c, const std::vector<double>& d, const std::vector<double>& m,
               const std::vector<size_t>& use) {
  Eigen::VectorXd D(use.size()), R(use.size());
  for (size_t k = 0; k < use.size(); ++k) {
    size_t i = use[k];
    double w = 1.0 / m[i];
    D(k) = d[i] * w;
    R(k) = (m[i] - c[i]) * w;
  }
  double dd = D.squaredNorm();
  if (dd <= 0) return std::nan("");
  return D.dot(R) / dd;
}
}  // namespace

ResponseFit fit_through_model(const std::function<std::vector<double>(double)>& simulate,
                              const std::vector<double>& measured, const std::vector<double>& meas_spread, double p0,
                              double p1, Response r, double lo, double hi, int max_iter) {
  ResponseFit f;
  size_t n = measured.size();
  std::vector<size_t> all(n);
  std::iota(all.begin(), all.end(), 0);
  double pa = p0, pb = p1;
  std::vector<double> ya = simulate(pa), yb = simulate(pb);
  f.model_runs = 2;
  std::vector<double> c(n), d(n);
  double p = pb;
  for (int it = 0; it < max_iter; ++it) {
    double ga = g_of(pa, r), gb = g_of(pb, r);
    for (size_t i = 0; i < n; ++i) {
      d[i] = (yb[i] - ya[i]) / (gb - ga);
      c[i] = ya[i] - d[i] * ga;
    }
    double g = solve_g(c, d, measured, all);
    if (!std::isfinite(g) || (r == Response::kInverse && g <= 0)) {
      f.note = "the observables do not respond to this parameter";
      p = pb;
      break;
    }
    p = std::clamp(g_inv(g, r), lo, hi);
    std::vector<double> yp = simulate(p);
    ++f.model_runs;
    f.sim_at_p = yp;
    double worst = 0;
    for (size_t i = 0; i < n; ++i) worst = std::max(worst, std::fabs(yp[i] / measured[i] - 1));
    f.verify_err = worst;
    // converged when the verifying run agrees with the linear prediction to 0.2%
    double pred_worst = 0;
    for (size_t i = 0; i < n; ++i)
      pred_worst = std::max(pred_worst, std::fabs(yp[i] - (c[i] + d[i] * g_of(p, r))) / std::fabs(measured[i]));
    if (pred_worst < 0.002 || p == lo || p == hi) break;
    // secant refinement with the two closest probes
    if (std::fabs(pa - p) > std::fabs(pb - p)) pa = pb, ya = yb;
    pb = p;
    yb = yp;
  }
  f.p = p;
  // uncertainty: scatter of the per-point solutions and the measurement spread, through d(g)/d(y)
  double gp = g_of(p, r), var_meas = 0;
  std::vector<double> gi;
  for (size_t i = 0; i < n; ++i) {
    if (d[i] == 0) continue;
    gi.push_back((measured[i] - c[i]) / d[i]);
    double sg = 0.5 * meas_spread[i] * measured[i] / std::fabs(d[i]);  // half the min-max spread
    var_meas += 1.0 / std::max(1e-300, sg * sg);
  }
  double se_g = 0;
  if (gi.size() >= 2) se_g = stddev(gi) / std::sqrt(double(gi.size()));
  if (var_meas > 0) se_g = std::sqrt(se_g * se_g + 1.0 / var_meas);
  double dp_dg = r == Response::kInverse ? 1.0 / (gp * gp) : 1.0;
  f.se = std::fabs(se_g * dp_dg);
  // leave one point out: fit on the rest, predict the left-out point with the linear response
  if (n >= 2) {
    for (size_t i = 0; i < n; ++i) {
      std::vector<size_t> rest;
      for (size_t j = 0; j < n; ++j)
        if (j != i) rest.push_back(j);
      double g = solve_g(c, d, measured, rest);
      f.loo_err.push_back(std::isfinite(g) ? (c[i] + d[i] * g) / measured[i] - 1 : std::nan(""));
    }
  }
  return f;
}

}  // namespace gtsim::validation
